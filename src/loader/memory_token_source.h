// MemoryTokenSource: a TokenSource over documents held in memory. It backs the synthetic loader
// and serves as the loader tests' in-memory double. Thread-safe: immutable after construction.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/token_source.h"

namespace stoker::loader {

class MemoryTokenSource : public TokenSource {
 public:
  MemoryTokenSource(std::string name, std::vector<std::vector<int64_t>> documents);

  std::string_view format() const override { return "memory"; }
  const std::string& path() const override { return name_; }
  TokenDType dtype() const override { return TokenDType::kInt64; }
  uint64_t num_documents() const override { return docs_.size(); }
  uint64_t num_tokens() const override { return num_tokens_; }
  uint64_t document_length(uint64_t doc) const override { return docs_[doc].size(); }
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const override;
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const override;

  const std::vector<int64_t>& document(uint64_t doc) const { return docs_[doc]; }

 private:
  Status Check(uint64_t doc, uint64_t offset, uint64_t count) const;
  std::string name_;
  std::vector<std::vector<int64_t>> docs_;
  uint64_t num_tokens_ = 0;
};

}  // namespace stoker::loader
