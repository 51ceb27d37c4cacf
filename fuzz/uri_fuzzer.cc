// libFuzzer target: the URI parsers (common/uri.h) on any bytes, with the
// properties their contracts promise.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/uri.h"

namespace {

bool Unreserved(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~';
}

bool Hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f');
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::string scheme = stoker::UriScheme(in);
  for (char c : scheme) {
    if (c >= 'A' && c <= 'Z') __builtin_trap();  // lower-cased
  }
  (void)stoker::LocalPathFromUri(in);
  // Split the input in two for JoinUri: a base and a relative path.
  const size_t cut = in.find('\n');
  if (cut != std::string_view::npos) {
    (void)stoker::JoinUri(in.substr(0, cut), in.substr(cut + 1));
  }
  auto parsed = stoker::ParseUri(in);
  if (parsed.ok() && parsed->kind == stoker::UriKind::kS3 && parsed->bucket.empty()) {
    __builtin_trap();  // an s3:// URI without a bucket is refused
  }
  // UriEncode: only unreserved bytes (and '/' when kept) or %XX escapes, decoding to the input.
  for (bool keep_slash : {false, true}) {
    const std::string enc = stoker::UriEncode(in, keep_slash);
    std::string decoded;
    for (size_t i = 0; i < enc.size(); ++i) {
      const char c = enc[i];
      if (c == '%') {
        if (i + 2 >= enc.size() || !Hex(enc[i + 1]) || !Hex(enc[i + 2])) __builtin_trap();
        decoded.push_back(static_cast<char>(std::stoi(enc.substr(i + 1, 2), nullptr, 16)));
        i += 2;
      } else if (Unreserved(c) || (keep_slash && c == '/')) {
        decoded.push_back(c);
      } else {
        __builtin_trap();
      }
    }
    if (decoded != in) __builtin_trap();
  }
  return 0;
}
