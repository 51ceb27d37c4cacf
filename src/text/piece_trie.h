// PieceTrie: a double-array trie over byte strings (the pieces of a Unigram vocabulary, the
// user-defined pieces SentencePiece's normalizer keeps whole), for the encoder's hot loop.
//
// Why a double array: Viterbi asks, at every character of the text, for every piece that is a
// prefix of the rest; a double array answers each next byte with two loads (base, check) and no
// hashing, no per-character allocation and no pointer chasing. Node s goes to t = base[s] + byte
// when check[t] == s; a node's value is its piece's id, or -1. The array is padded by 256 nodes
// so that no transition needs a bounds check.
// Immutable after Build; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace stoker {

class PieceTrie {
 public:
  PieceTrie() = default;
  // `keys`: non-empty strings with ids >= 0; a repeated string keeps its first id.
  static PieceTrie Build(std::vector<std::pair<std::string_view, int32_t>> keys);

  bool empty() const { return nodes_.empty(); }

  // Calls fn(length, id) for each key that is a prefix of `text`, shortest first.
  template <typename Fn>
  void ForEachPrefix(std::string_view text, const Fn& fn) const {
    if (nodes_.empty()) return;
    const Node* nodes = nodes_.data();
    int32_t s = 0;
    for (size_t i = 0; i < text.size(); ++i) {
      const int32_t t = nodes[s].base + static_cast<uint8_t>(text[i]);
      if (nodes[t].check != s) return;
      s = t;
      if (nodes[s].value >= 0) fn(i + 1, nodes[s].value);
    }
  }

  // Whether some key starts with `prefix` (or is it).
  bool HasKeyStartingWith(std::string_view prefix) const {
    if (nodes_.empty()) return false;
    int32_t s = 0;
    for (char ch : prefix) {
      const int32_t t = nodes_[static_cast<size_t>(s)].base + static_cast<uint8_t>(ch);
      if (nodes_[static_cast<size_t>(t)].check != s) return false;
      s = t;
    }
    return true;
  }

  // The length of the longest key that is a prefix of `text` (0: none).
  size_t LongestPrefix(std::string_view text) const {
    size_t longest = 0;
    ForEachPrefix(text, [&](size_t length, int32_t) { longest = length; });
    return longest;
  }

 private:
  struct Node {
    int32_t base = 0;
    int32_t check = -1;  // the parent; -1 free
    int32_t value = -1;
  };
  std::vector<Node> nodes_;
};

}  // namespace stoker
