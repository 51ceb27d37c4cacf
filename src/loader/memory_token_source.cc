#include "loader/memory_token_source.h"

#include <algorithm>
#include <limits>

namespace stoker::loader {

MemoryTokenSource::MemoryTokenSource(std::string name, std::vector<std::vector<int64_t>> documents)
    : name_(std::move(name)), docs_(std::move(documents)) {
  for (const auto& d : docs_) num_tokens_ += d.size();
}

Status MemoryTokenSource::Check(uint64_t doc, uint64_t offset, uint64_t count) const {
  if (doc >= docs_.size() || offset > docs_[doc].size() || count > docs_[doc].size() - offset) {
    return OutOfRange(name_ + ": tokens [" + std::to_string(offset) + ", " +
                      std::to_string(offset + count) + ") outside document " + std::to_string(doc));
  }
  return Status::OK();
}

Status MemoryTokenSource::Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const {
  STOKER_RETURN_IF_ERROR(Check(doc, offset, count));
  const int64_t* in = docs_[doc].data() + offset;
  for (uint64_t i = 0; i < count; ++i) {
    if (in[i] < 0 || in[i] > std::numeric_limits<int32_t>::max()) {
      return Corruption(name_ + ": token " + std::to_string(in[i]) + " does not fit int32");
    }
    out[i] = static_cast<int32_t>(in[i]);
  }
  return Status::OK();
}

Status MemoryTokenSource::Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const {
  STOKER_RETURN_IF_ERROR(Check(doc, offset, count));
  std::copy_n(docs_[doc].data() + offset, count, out);
  return Status::OK();
}

}  // namespace stoker::loader
