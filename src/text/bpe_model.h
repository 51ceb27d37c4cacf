// BpeModel: the byte-pair-encoding core shared by tiktoken files and tokenizer.json — a vocabulary
// of byte strings and a table of mergeable pairs, and the merge of one pre-token into ids.
//
// Both formats reduce to the same rule: start from the piece's single bytes and repeatedly merge
// the adjacent pair with the lowest rank (the leftmost one on a tie) until no pair is mergeable.
// tiktoken ranks a pair by the id of the concatenated token; tokenizer.json by the merge's line.
// Pieces up to kSmallPiece symbols use a flat scan (cache-friendly, like tiktoken); longer ones a
// heap with lazy invalidation, O(n log n), so a 10 MB word without a space is not quadratic.
// Thread-safe after construction: every method is const.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/function_ref.h"
#include "stoker/status.h"
#include "text/token_bytes.h"
#include "text/zeroed_array.h"

namespace stoker {

// Runs fn(0..parts-1), part 0 on the calling thread and the others on threads of their own.
void RunParts(size_t parts, FunctionRef<void(size_t)> fn);

class BpeModel {
 public:
  struct Merge {
    int32_t left;
    int32_t right;
    uint32_t rank;   // lower merges first
    int32_t merged;  // the id of left+right
  };

  // `tokens[id]` is the byte string of id (ids without bytes, e.g. added tokens, may be empty).
  // `merges`: every mergeable pair. Fails if a merged id's bytes are not left's + right's.
  static Result<BpeModel> Build(const std::vector<std::string>& tokens,
                                const std::vector<Merge>& merges);
  // tiktoken's ranks: every pair (a, b) whose concatenation is a token merges with that token's
  // id as rank. Requires all 256 single bytes to be tokens.
  // Indexes the tokens and finds and files the pairs on `threads` threads (0 =
  // DefaultThreadsPerRank); the tables' layout may differ between runs, their answers do not.
  static Result<BpeModel> BuildFromRanks(TokenBytes tokens, int threads = 1);
  static Result<BpeModel> BuildFromRanks(const std::vector<std::string>& tokens, int threads = 1);

  // Appends the ids of `piece` (raw bytes). A byte with no single-byte token appends `unk_id`
  // (once per run of such bytes when `fuse_unk`) or nothing when unk_id < 0.
  // In character mode (set_char_symbols) the first symbols are the piece's UTF-8 characters, as
  // SentencePiece and `tokenizers`' BPE start: a character's own token, else (byte fallback) the
  // tokens of its bytes, else unk as above, per character. `piece` must be valid UTF-8 then.
  void EncodePiece(std::string_view piece, std::vector<int32_t>* ids) const;
  // The id whose bytes are exactly `piece`, or -1.
  int32_t Find(std::string_view piece) const;

  // True when cutting a text before each `marker` that follows another character cannot change
  // its ids: `marker` is a token, and no token holds it after a character other than itself (so
  // no merge ever joins a character to a following marker). Llama 2's "▁▁▁▁" passes.
  bool MarkerCutIsExact(std::string_view marker) const;

  std::string_view token_bytes(int32_t id) const { return tokens_[static_cast<size_t>(id)]; }
  size_t size() const { return tokens_.size(); }

  void set_unk(int32_t unk_id, bool fuse_unk) {
    unk_id_ = unk_id;
    fuse_unk_ = fuse_unk;
    FindIsolated();
  }
  // Character mode. `byte_fallback`: the ids of the 256 byte tokens ("<0x00>"...), or empty for
  // none; a character without a token of its own becomes its bytes' tokens when all exist.
  void set_char_symbols(std::vector<int32_t> byte_fallback) {
    char_symbols_ = true;
    fallback_ids_ = std::move(byte_fallback);
    FindIsolated();
  }

  // Character mode: whether the ASCII character `c` is isolated, i.e. no merge's token holds it
  // (so no merge ever joins it to a neighbour) and it is never unk (its own token, or byte
  // fallback with no unk possible), so EncodePiece of a piece cut before and after it gives the
  // same ids. Llama 2's "\n", "\t" and digits are; Gemma's are not.
  bool isolated(uint8_t c) const { return c < 0x80 && isolated_[c]; }
  bool has_isolated() const { return has_isolated_; }

  static constexpr size_t kSmallPiece = 48;

 private:
  struct PairSlot {  // all zero = empty
    uint64_t key;    // (left << 32 | right) + 1; 0 = empty
    uint32_t rank;
    int32_t merged;
  };

  int32_t FindHashed(std::string_view piece, uint64_t hash) const;  // hash = HashBytes(piece)
  // Appends every (left, right) -> id of the ids [first, last) to *merges (BuildFromRanks).
  // `duplicates`: some ids share their bytes (BuildIndex said so).
  void FindRankMerges(size_t first, size_t last, bool duplicates, std::vector<Merge>* merges) const;
  bool FindPair(int32_t left, int32_t right, uint32_t* rank, int32_t* merged) const;
  // Other threads may insert at the same time if their keys all differ from this one.
  void InsertPair(int32_t left, int32_t right, uint32_t rank, int32_t merged);
  // InsertPair for each, on this thread (the same contract for concurrent callers).
  void InsertPairs(std::span<const Merge> merges);
  // Fills slots_ and byte_ids_ on `parts` threads; true if two ids have the same bytes.
  bool BuildIndex(size_t parts);
  // Files the tokens [first, last) in slots_; byte_ids: their lowest single-byte ids. Returns the
  // number of empty slots it filled (with all threads' calls: the number of distinct tokens).
  size_t IndexRange(size_t first, size_t last, int32_t* byte_ids);
  // The first symbols of a piece in character mode.
  void CharSymbols(std::string_view piece, std::vector<int32_t>* syms) const;
  void MergeSmall(std::vector<int32_t>& syms, std::vector<int32_t>* ids) const;
  void MergeLarge(std::vector<int32_t>& syms, std::vector<int32_t>* ids) const;
  // Fills isolated_ (character mode only; else none is).
  void FindIsolated();

  TokenBytes tokens_;
  std::vector<int32_t> byte_ids_ = std::vector<int32_t>(256, -1);
  static constexpr uint64_t kTagMask = 0xFFFFFFFF00000000ull;
  // Open addressing over tokens_ by their bytes: (hash & kTagMask) | (id + 1), or 0 (empty).
  ZeroedArray<uint64_t> slots_;
  uint64_t slot_mask_ = 0;
  ZeroedArray<PairSlot> pairs_;
  uint64_t pair_mask_ = 0;
  int32_t unk_id_ = -1;
  bool fuse_unk_ = false;
  bool char_symbols_ = false;
  std::vector<int32_t> fallback_ids_;  // by byte; -1 where that byte has no token
  bool isolated_[128] = {};
  bool has_isolated_ = false;
};

}  // namespace stoker
