#include "text/added_tokens.h"

#include <algorithm>
#include <cstring>

#include "text/utf8.h"

namespace stoker {
namespace {

// Unicode's White_Space property (Rust's char::is_whitespace, which tokenizers strips with).
bool IsWhiteSpace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

}  // namespace

size_t WhiteSpaceBefore(std::string_view text, size_t end, size_t floor) {
  while (end > floor) {
    size_t start = end - 1;
    while (start > floor && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    size_t len;
    if (!IsWhiteSpace(DecodeUtf8At(text, start, &len))) break;
    end = start;
  }
  return end;
}

size_t WhiteSpaceAfter(std::string_view text, size_t start) {
  size_t len;
  while (start < text.size() && IsWhiteSpace(DecodeUtf8At(text, start, &len))) start += len;
  return start;
}

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
  if (!tokens_.empty() && tokens_.front().content[0] == tokens_.back().content[0]) {
    only_first_byte_ = static_cast<uint8_t>(tokens_.front().content[0]);
  }
}

AddedTokens::Match AddedTokens::Find(std::string_view text, size_t from) const {
  for (size_t i = from; i < text.size(); ++i) {
    if (only_first_byte_ >= 0) {
      const void* next = std::memchr(text.data() + i, only_first_byte_, text.size() - i);
      if (next == nullptr) break;
      i = static_cast<const char*>(next) - text.data();
    }
    uint8_t b = static_cast<uint8_t>(text[i]);
    for (uint32_t k = first_index_[b]; k < first_index_[b + 1]; ++k) {
      const std::string& c = tokens_[k].content;
      if (c.size() <= text.size() - i && std::memcmp(text.data() + i, c.data(), c.size()) == 0) {
        const Token& t = tokens_[k];
        const size_t start = t.lstrip ? WhiteSpaceBefore(text, i, from) : i;
        const size_t stop = t.rstrip ? WhiteSpaceAfter(text, i + c.size()) : i + c.size();
        return {start, stop - start, t.id};
      }
    }
  }
  return {std::string_view::npos, 0, -1};
}

}  // namespace stoker
