#include "format/megatron_index.h"

#include <string>

namespace stoker {

Status CorruptionAt(const std::string& file, uint64_t offset, const std::string& what) {
  return Corruption(file + ": at byte " + std::to_string(offset) + ": " + what);
}

Result<MegatronIndex> MegatronIndex::Parse(const uint8_t* data, size_t size,
                                           const std::string& idx_path, uint64_t bin_size_bytes,
                                           const std::string& bin_path, Checks checks) {
  MegatronIndex ix;
  ix.data_ = data;
  ix.size_ = size;
  ix.idx_path_ = idx_path;
  ix.bin_path_ = bin_path;
  ix.bin_size_ = bin_size_bytes;
  if (size == 0) return CorruptionAt(idx_path, 0, "empty file, expected a Megatron MMIDIDX index");
  if (size < sizeof(kMegatronMagic) || std::memcmp(data, kMegatronMagic, 9) != 0) {
    return CorruptionAt(idx_path, 0,
                        "bad magic, expected \"MMIDIDX\\0\\0\" (not a Megatron index)");
  }
  if (size < kMegatronHeaderBytes) {
    return CorruptionAt(idx_path, size,
                        "truncated: " + std::to_string(size) + " bytes, the header needs 34");
  }
  uint64_t version = ix.Load<uint64_t>(9);
  if (version != kMegatronVersion) {
    return CorruptionAt(idx_path, 9,
                        "unsupported version " + std::to_string(version) + " (expected 1)");
  }
  uint8_t code = data[17];
  if (code < 1 || code > 10) {
    return CorruptionAt(idx_path, 17,
                        "unknown dtype code " + std::to_string(code) + " (expected 1-10)");
  }
  ix.dtype_ = static_cast<TokenDType>(code);
  ix.num_sequences_ = ix.Load<uint64_t>(18);
  ix.num_document_indices_ = ix.Load<uint64_t>(26);
  const uint64_t n = ix.num_sequences_;
  const uint64_t d1 = ix.num_document_indices_;
  // Bounding the counts by the file size first keeps the size arithmetic below from overflowing.
  if (n > size / 12) {
    return CorruptionAt(idx_path, 18,
                        "sequence count " + std::to_string(n) + " does not fit a " +
                            std::to_string(size) + "-byte index");
  }
  if (d1 == 0 || d1 > size / 8) {
    return CorruptionAt(idx_path, 26,
                        "document count " + std::to_string(d1) + " is impossible for a " +
                            std::to_string(size) +
                            "-byte index (it includes the leading 0, so >= 1)");
  }
  const uint64_t plain = kMegatronHeaderBytes + 12 * n + 8 * d1;
  if (size == plain) {
    ix.multimodal_ = false;
  } else if (size == plain + n) {
    ix.multimodal_ = true;
  } else if (size < plain) {
    return CorruptionAt(idx_path, size,
                        "truncated: " + std::to_string(size) +
                            " bytes, but N=" + std::to_string(n) +
                            " and D+1=" + std::to_string(d1) + " need " + std::to_string(plain));
  } else {
    return CorruptionAt(idx_path, plain,
                        "unexpected trailing bytes: the file is " + std::to_string(size) +
                            " bytes, N=" + std::to_string(n) + " and D+1=" + std::to_string(d1) +
                            " need " + std::to_string(plain) + " (or " + std::to_string(plain + n) +
                            " when multimodal)");
  }
  // O(1) checks that catch the usual damage (a truncated .bin) without reading the arrays.
  if (ix.document_index(d1 - 1) != static_cast<int64_t>(n)) {
    return CorruptionAt(idx_path, ix.doc_index_offset() + 8 * (d1 - 1),
                        "last document index is " + std::to_string(ix.document_index(d1 - 1)) +
                            ", expected the sequence count " + std::to_string(n));
  }
  if (n > 0) {
    int64_t ptr = ix.sequence_pointer(n - 1);
    int32_t len = ix.sequence_length(n - 1);
    uint64_t item = TokenDTypeSize(ix.dtype_);
    if (ptr < 0 || len < 0 ||
        static_cast<uint64_t>(ptr) + static_cast<uint64_t>(len) * item > bin_size_bytes) {
      return Corruption(bin_path + ": truncated or wrong file: " + std::to_string(bin_size_bytes) +
                        " bytes, but the last sequence of " + idx_path + " (" +
                        std::to_string(len) + " tokens at byte " + std::to_string(ptr) +
                        ") ends past it");
    }
  }
  if (checks == Checks::kFull) STOKER_RETURN_IF_ERROR(ix.ValidateFull());
  return ix;
}

Status MegatronIndex::ValidateFull(uint64_t* tokens, uint64_t* nonempty) const {
  const uint64_t n = num_sequences_;
  const uint64_t item = TokenDTypeSize(dtype_);
  uint64_t expected_ptr = 0;  // the end of the previous sequence in the .bin
  uint64_t sum = 0, nonzero = 0;
  for (uint64_t i = 0; i < n; ++i) {
    int32_t len = sequence_length(i);
    sum += static_cast<uint64_t>(len < 0 ? 0 : len);
    nonzero += len > 0;
    if (len < 0) {
      return CorruptionAt(
          idx_path_, kMegatronHeaderBytes + 4 * i,
          "sequence " + std::to_string(i) + " has negative length " + std::to_string(len));
    }
    int64_t ptr = sequence_pointer(i);
    if (ptr < 0 || static_cast<uint64_t>(ptr) < expected_ptr) {
      return CorruptionAt(idx_path_, pointers_offset() + 8 * i,
                          "sequence " + std::to_string(i) + " starts at byte " +
                              std::to_string(ptr) + ", before the end of the previous one (" +
                              std::to_string(expected_ptr) + "): offsets are not monotonic");
    }
    uint64_t end = static_cast<uint64_t>(ptr) + static_cast<uint64_t>(len) * item;
    if (end > bin_size_) {
      return CorruptionAt(idx_path_, pointers_offset() + 8 * i,
                          "sequence " + std::to_string(i) + " (" + std::to_string(len) +
                              " tokens at byte " + std::to_string(ptr) + ") ends at byte " +
                              std::to_string(end) + ", past the end of " + bin_path_ + " (" +
                              std::to_string(bin_size_) + " bytes)");
    }
    expected_ptr = end;
  }
  int64_t prev = 0;
  for (uint64_t d = 0; d < num_document_indices_; ++d) {
    int64_t v = document_index(d);
    bool bad = d == 0 ? v != 0 : (v < prev || v > static_cast<int64_t>(n));
    if (bad) {
      return CorruptionAt(idx_path_, doc_index_offset() + 8 * d,
                          "document index " + std::to_string(d) + " is " + std::to_string(v) +
                              (d == 0 ? ", expected 0"
                                      : ", expected a value in [" + std::to_string(prev) + ", " +
                                            std::to_string(n) + "]"));
    }
    prev = v;
  }
  if (tokens != nullptr) *tokens = sum;
  if (nonempty != nullptr) *nonempty = nonzero;
  return Status::OK();
}

}  // namespace stoker
