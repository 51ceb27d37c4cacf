#include "text/bytes_tokenizer.h"

namespace stoker {

BytesTokenizer::BytesTokenizer() : identity_{"bytes", "bytes", ""} {}

Status BytesTokenizer::Encode(std::string_view utf8, std::vector<int32_t>* ids) const {
  size_t start = ids->size();
  ids->resize(start + utf8.size());
  int32_t* out = ids->data() + start;
  for (size_t i = 0; i < utf8.size(); ++i) out[i] = static_cast<unsigned char>(utf8[i]);
  return Status::OK();
}

Status BytesTokenizer::Decode(std::span<const int32_t> ids, std::string* out) const {
  for (int32_t id : ids) {
    if (id < 0 || id > kEosId) {
      return OutOfRange("token id " + std::to_string(id) + " is outside the vocabulary [0, 257)");
    }
    if (id < kEosId) out->push_back(static_cast<char>(id));
  }
  return Status::OK();
}

}  // namespace stoker
