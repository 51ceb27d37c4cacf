// ArraySource: a TokenSource over one flat array of tokens in a single file: nanoGPT's raw uint16
// `.bin`, llm.c's headered `.bin`, and NumPy `.npy` (1-D = one document, 2-D [N, L] = N documents
// of L tokens, C or Fortran order).
//
// The file is memory-mapped once. Thread-safe: immutable after Open.
#pragma once

#include <memory>
#include <string>

#include "common/mapped_file.h"
#include "stoker/token_source.h"

namespace stoker {

// llm.c shard headers: 256 int32, [0] magic, [1] version, [2] token count
// (docs/formats-reference.md §6.1).
inline constexpr int32_t kLlmcMagicGpt2 = 20240520;    // version 1, uint16 tokens
inline constexpr int32_t kLlmcMagicLlama3 = 20240801;  // version 7, uint32 tokens
inline constexpr int32_t kLlmcMagicEval = 20240522;    // multiple-choice eval files, not tokens
inline constexpr uint64_t kLlmcHeaderBytes = 1024;

class ArraySource : public TokenSource {
 public:
  static Result<std::unique_ptr<ArraySource>> OpenNanoGpt(const std::string& path);
  static Result<std::unique_ptr<ArraySource>> OpenLlmc(const std::string& path);
  static Result<std::unique_ptr<ArraySource>> OpenNpy(const std::string& path);

  // True if `data` starts like an llm.c shard (any of the three magics).
  static bool LooksLikeLlmc(const uint8_t* data, uint64_t size);

  std::string_view format() const override { return format_; }
  const std::string& path() const override { return file_->path(); }
  TokenDType dtype() const override { return dtype_; }
  uint64_t num_documents() const override { return num_documents_; }
  uint64_t num_tokens() const override { return num_documents_ * document_length_; }
  uint64_t document_length(uint64_t) const override { return document_length_; }
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const override;
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const override;

  const MappedFile& file() const { return *file_; }
  uint64_t data_offset() const { return data_offset_; }

 private:
  ArraySource() = default;
  template <typename T>
  Status ReadImpl(uint64_t doc, uint64_t offset, uint64_t count, T* out) const;

  std::string_view format_;
  std::unique_ptr<MappedFile> file_;
  TokenDType dtype_ = TokenDType::kUint16;
  uint64_t data_offset_ = 0;
  uint64_t num_documents_ = 1;
  uint64_t document_length_ = 0;
  // Element steps between consecutive documents and consecutive tokens: (L, 1) in C order,
  // (1, N) for a Fortran-ordered 2-D array.
  uint64_t document_stride_ = 0;
  uint64_t token_stride_ = 1;
};

}  // namespace stoker
