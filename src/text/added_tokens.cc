#include "text/added_tokens.h"

#include <algorithm>
#include <cstring>

namespace stoker {

AddedTokens::AddedTokens(std::vector<Token> tokens) {
  for (Token& t : tokens) {
    if (!t.content.empty()) tokens_.push_back(std::move(t));
  }
  std::stable_sort(tokens_.begin(), tokens_.end(), [](const Token& a, const Token& b) {
    uint8_t fa = static_cast<uint8_t>(a.content[0]), fb = static_cast<uint8_t>(b.content[0]);
    return fa != fb ? fa < fb : a.content.size() > b.content.size();
  });
  size_t k = 0;
  for (int b = 0; b < 256; ++b) {
    first_index_[b] = static_cast<uint32_t>(k);
    while (k < tokens_.size() && static_cast<uint8_t>(tokens_[k].content[0]) == b) ++k;
  }
  first_index_[256] = static_cast<uint32_t>(k);
}

AddedTokens::Match AddedTokens::Find(std::string_view text, size_t from) const {
  for (size_t i = from; i < text.size(); ++i) {
    uint8_t b = static_cast<uint8_t>(text[i]);
    for (uint32_t k = first_index_[b]; k < first_index_[b + 1]; ++k) {
      const std::string& c = tokens_[k].content;
      if (c.size() <= text.size() - i && std::memcmp(text.data() + i, c.data(), c.size()) == 0) {
        return {i, c.size(), tokens_[k].id};
      }
    }
  }
  return {std::string_view::npos, 0, -1};
}

}  // namespace stoker
