// AddedTokens: finds added / special tokens (e.g. `<|endoftext|>`) in text, leftmost-longest as
// the reference libraries' Aho-Corasick does, before the text is pre-tokenized. A token with
// tokenizers' `lstrip` / `rstrip` takes the Unicode whitespace (White_Space, as Rust's
// char::is_whitespace) before / after it into its match, so that whitespace is not encoded (Phi-3's
// chat tokens strip on the right); lstrip stops at the previous match's end.
// Thread-safe after construction: Find is const.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stoker {

class AddedTokens {
 public:
  struct Token {
    std::string content;
    int32_t id;
    bool lstrip = false;  // the whitespace before it belongs to the match
    bool rstrip = false;  // the whitespace after it belongs to the match
  };
  struct Match {
    size_t pos;  // npos when none
    size_t len;
    int32_t id;
  };

  AddedTokens() = default;
  explicit AddedTokens(std::vector<Token> tokens);

  bool empty() const { return tokens_.empty(); }
  // The leftmost match at or after `from`, the longest token there, widened by its lstrip (not
  // before `from`) and rstrip. `text` is valid UTF-8.
  Match Find(std::string_view text, size_t from) const;

 private:
  std::vector<Token> tokens_;                // sorted by (first byte, length descending)
  std::array<uint32_t, 257> first_index_{};  // tokens_ starting with byte b: [b], [b+1])
  // The first byte of every token when they all have the same one (`<` of `<|im_end|>` & co.),
  // else -1: then Find jumps between its occurrences with memchr instead of testing every byte.
  int only_first_byte_ = -1;
};

// The end of the run of whitespace that lstrip and rstrip take, starting at `start` (valid UTF-8).
size_t WhiteSpaceAfter(std::string_view text, size_t start);
// The start of the run of whitespace that ends at `end`, not before `floor` (valid UTF-8).
size_t WhiteSpaceBefore(std::string_view text, size_t end, size_t floor);

}  // namespace stoker
