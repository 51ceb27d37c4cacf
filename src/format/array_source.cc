#include "format/array_source.h"

#include "common/load.h"
#include "format/megatron_index.h"
#include "format/npy_header.h"
#include "format/token_convert.h"

namespace stoker {

Result<std::unique_ptr<ArraySource>> ArraySource::OpenNanoGpt(const std::string& path) {
  STOKER_ASSIGN_OR_RETURN(auto file, MappedFile::Open(path));
  if (file->size() == 0) return CorruptionAt(path, 0, "empty file, no tokens");
  if (file->size() % 2 != 0) {
    return CorruptionAt(path, file->size() - 1,
                        "odd size " + std::to_string(file->size()) +
                            ": a nanoGPT .bin holds uint16 tokens (2 bytes each); truncated?");
  }
  auto src = std::unique_ptr<ArraySource>(new ArraySource());
  src->format_ = "nanogpt";
  src->dtype_ = TokenDType::kUint16;
  src->document_length_ = file->size() / 2;
  src->file_ = std::move(file);
  return src;
}

bool ArraySource::LooksLikeLlmc(const uint8_t* data, uint64_t size) {
  if (size < 4) return false;
  int32_t magic = LoadAs<int32_t>(data);
  return magic == kLlmcMagicGpt2 || magic == kLlmcMagicLlama3 || magic == kLlmcMagicEval;
}

Result<std::unique_ptr<ArraySource>> ArraySource::OpenLlmc(const std::string& path) {
  STOKER_ASSIGN_OR_RETURN(auto file, MappedFile::Open(path));
  const uint8_t* d = file->data();
  if (file->size() < kLlmcHeaderBytes) {
    return CorruptionAt(path, file->size(),
                        "truncated: an llm.c shard starts with a 1024-byte "
                        "header, the file has " +
                            std::to_string(file->size()) + " bytes");
  }
  int32_t magic = LoadAs<int32_t>(d), version = LoadAs<int32_t>(d + 4),
          count = LoadAs<int32_t>(d + 8);
  TokenDType dtype;
  if (magic == kLlmcMagicGpt2 && version == 1) {
    dtype = TokenDType::kUint16;
  } else if (magic == kLlmcMagicLlama3 && version == 7) {
    dtype = TokenDType::kUint32;
  } else if (magic == kLlmcMagicEval) {
    return Unimplemented(path +
                         ": an llm.c multiple-choice eval file (magic 20240522), not tokens");
  } else if (magic == kLlmcMagicGpt2 || magic == kLlmcMagicLlama3) {
    return CorruptionAt(path, 4,
                        "llm.c magic " + std::to_string(magic) + " with unexpected version " +
                            std::to_string(version));
  } else {
    return CorruptionAt(
        path, 0,
        "bad magic " + std::to_string(magic) + ", expected an llm.c shard (20240520 or 20240801)");
  }
  if (count < 0) return CorruptionAt(path, 8, "negative token count " + std::to_string(count));
  uint64_t expected = kLlmcHeaderBytes + static_cast<uint64_t>(count) * TokenDTypeSize(dtype);
  if (file->size() != expected) {
    return CorruptionAt(path, std::min<uint64_t>(file->size(), expected),
                        std::string(file->size() < expected ? "truncated" : "trailing bytes") +
                            ": the header says " + std::to_string(count) + " tokens (" +
                            std::to_string(expected) + " bytes with the header) but the file has " +
                            std::to_string(file->size()));
  }
  auto src = std::unique_ptr<ArraySource>(new ArraySource());
  src->format_ = "llmc";
  src->dtype_ = dtype;
  src->data_offset_ = kLlmcHeaderBytes;
  src->document_length_ = static_cast<uint64_t>(count);
  src->file_ = std::move(file);
  return src;
}

Result<std::unique_ptr<ArraySource>> ArraySource::OpenNpy(const std::string& path) {
  STOKER_ASSIGN_OR_RETURN(auto file, MappedFile::Open(path));
  STOKER_ASSIGN_OR_RETURN(NpyHeader h, ParseNpyHeader(file->data(), file->size(), path));
  auto src = std::unique_ptr<ArraySource>(new ArraySource());
  src->format_ = "npy";
  src->dtype_ = h.dtype;
  src->data_offset_ = h.data_offset;
  if (h.shape.size() == 2) {
    src->num_documents_ = h.shape[0];
    src->document_length_ = h.shape[1];
    if (h.fortran_order) {
      src->document_stride_ = 1;
      src->token_stride_ = h.shape[0];
    } else {
      src->document_stride_ = h.shape[1];
      src->token_stride_ = 1;
    }
  } else {
    src->document_length_ = h.num_elements;  // 1-D, or 0-d (one element)
  }
  src->file_ = std::move(file);
  return src;
}

template <typename T>
Status ArraySource::ReadImpl(uint64_t doc, uint64_t offset, uint64_t count, T* out) const {
  STOKER_RETURN_IF_ERROR(CheckReadRange(doc, num_documents_, document_length_, offset, count)
                             .WithContext(file_->path()));
  const uint64_t item = TokenDTypeSize(dtype_);
  uint64_t pos = data_offset_ + (doc * document_stride_ + offset * token_stride_) * item;
  return ReadTokensAt(file_->data(), file_->size(), file_->path(), pos, dtype_, count,
                      token_stride_, out);
}

Status ArraySource::Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const {
  return ReadImpl(doc, offset, count, out);
}

Status ArraySource::Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const {
  return ReadImpl(doc, offset, count, out);
}

}  // namespace stoker
