// MegatronIndex: a parsed, validated view of a Megatron-LM `.idx` file (MMIDIDX v1,
// docs/formats-reference.md §1.2) held in memory that the caller owns (usually a MappedFile).
//
// Fields are read with memcpy because the arrays start at the unaligned offset 34. Every error is
// kCorruption and names the file and the byte offset of the offending field.
// Thread-safe: immutable after Parse.
#pragma once

#include <cstdint>
#include <string>

#include "common/load.h"
#include "stoker/status.h"
#include "stoker/token_source.h"

namespace stoker {

inline constexpr char kMegatronMagic[9] = {'M', 'M', 'I', 'D', 'I', 'D', 'X', 0, 0};
inline constexpr uint64_t kMegatronVersion = 1;
inline constexpr size_t kMegatronHeaderBytes = 34;

// "<file>: at byte <offset>: <what>" as kCorruption.
Status CorruptionAt(const std::string& file, uint64_t offset, const std::string& what);

class MegatronIndex {
 public:
  enum class Checks {
    // Header, version, dtype, counts against the file size, and the last sequence against the
    // .bin size: O(1), for opening thousands of shards quickly.
    kHeader,
    // Also every length, pointer and document index: O(N).
    kFull,
  };

  // Parses `size` bytes at `data` (which must outlive the index) read from `idx_path`, for a .bin
  // of `bin_size_bytes` bytes named `bin_path`.
  static Result<MegatronIndex> Parse(const uint8_t* data, size_t size, const std::string& idx_path,
                                     uint64_t bin_size_bytes, const std::string& bin_path,
                                     Checks checks);

  // The O(N) checks of Checks::kFull (Parse runs them when asked). When given, *tokens and
  // *nonempty get the sum of the lengths and the count of non-zero ones (same pass).
  Status ValidateFull(uint64_t* tokens = nullptr, uint64_t* nonempty = nullptr) const;

  TokenDType dtype() const { return dtype_; }
  uint64_t num_sequences() const { return num_sequences_; }
  // Real documents: document_count - 1.
  uint64_t num_documents() const { return num_document_indices_ - 1; }
  bool multimodal() const { return multimodal_; }
  uint64_t size_bytes() const { return size_; }

  int32_t sequence_length(uint64_t i) const { return Load<int32_t>(kMegatronHeaderBytes + 4 * i); }
  int64_t sequence_pointer(uint64_t i) const { return Load<int64_t>(pointers_offset() + 8 * i); }
  int64_t document_index(uint64_t d) const { return Load<int64_t>(doc_index_offset() + 8 * d); }
  // Starts fetching sequence i's length and pointer into the cache (a hint; never faults).
  void PrefetchSequence(uint64_t i) const {
    __builtin_prefetch(data_ + kMegatronHeaderBytes + 4 * i);
    __builtin_prefetch(data_ + pointers_offset() + 8 * i);
  }

  uint64_t pointers_offset() const { return kMegatronHeaderBytes + 4 * num_sequences_; }
  uint64_t doc_index_offset() const { return kMegatronHeaderBytes + 12 * num_sequences_; }

 private:
  template <typename T>
  T Load(uint64_t offset) const {
    return LoadAs<T>(data_ + offset);
  }

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string idx_path_;
  std::string bin_path_;
  uint64_t bin_size_ = 0;
  TokenDType dtype_ = TokenDType::kUint16;
  uint64_t num_sequences_ = 0;
  uint64_t num_document_indices_ = 1;
  bool multimodal_ = false;
};

}  // namespace stoker
