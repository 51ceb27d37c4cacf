#include "text/base64.h"

#include <cstdint>

namespace stoker {
namespace {

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

bool DecodeBase64(std::string_view in, std::string* out) {
  if (in.empty() || in.size() % 4 != 0) return false;
  size_t pad = 0;
  if (in.back() == '=') ++pad;
  if (in.size() >= 2 && in[in.size() - 2] == '=') ++pad;
  for (size_t i = 0; i < in.size(); i += 4) {
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) {
      char c = in[i + k];
      bool last_group = i + 4 == in.size();
      int d = (c == '=' && last_group && k >= 4 - pad) ? 0 : Base64Value(c);
      if (d < 0) return false;
      v = (v << 6) | static_cast<uint32_t>(d);
    }
    out->push_back(static_cast<char>(v >> 16));
    if (i + 4 < in.size() || pad < 2) out->push_back(static_cast<char>((v >> 8) & 0xFF));
    if (i + 4 < in.size() || pad < 1) out->push_back(static_cast<char>(v & 0xFF));
  }
  return true;
}

}  // namespace stoker
