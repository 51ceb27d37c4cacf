#include "text/utf8.h"

#include <simdjson.h>

#include <cstdint>
#include <cstring>

namespace stoker {
namespace {

// Length of the valid sequence starting at p[0..n), or 0 if it is invalid; then *bad_len is the
// length of its maximal invalid subpart (the lead byte plus the continuation bytes that were still
// acceptable), which is what one U+FFFD replaces.
size_t ValidSequenceLength(const unsigned char* p, size_t n, size_t* bad_len) {
  unsigned char c = p[0];
  if (c < 0x80) return 1;
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    *bad_len = 1;
    return 0;
  }
  for (size_t i = 1; i < len; ++i) {
    unsigned char b = i < n ? p[i] : 0;
    bool ok = i < n && (i == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF));
    if (!ok) {
      *bad_len = i;
      return 0;
    }
  }
  return len;
}

// Below this, the scalar loop is as fast as the dispatch to simdjson's SIMD check.
constexpr size_t kSimdMinBytes = 32;

// Length of the run of ASCII bytes at the start of [p, p + n), checked 8 bytes at a time.
size_t AsciiPrefix(const unsigned char* p, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (w & 0x8080808080808080ULL) break;
  }
  while (i < n && p[i] < 0x80) ++i;
  return i;
}

}  // namespace

Result<Utf8Policy> ParseUtf8Policy(std::string_view name) {
  if (name == "replace") return Utf8Policy::kReplace;
  if (name == "skip") return Utf8Policy::kSkip;
  if (name == "fail") return Utf8Policy::kFail;
  return InvalidArgument("unknown UTF-8 policy '" + std::string(name) +
                         "' (expected replace, skip or fail)");
}

std::string_view Utf8PolicyName(Utf8Policy policy) {
  switch (policy) {
    case Utf8Policy::kReplace:
      return "replace";
    case Utf8Policy::kSkip:
      return "skip";
    case Utf8Policy::kFail:
      return "fail";
  }
  return "unknown";
}

size_t FindInvalidUtf8(std::string_view text) {
  // Valid text is the rule: simdjson's SIMD check says so at many GB/s, where the loop below
  // stops at every non-ASCII byte (a chat pack of accented and CJK text spent 5-7% of its CPU in
  // it); the loop then finds where only for text that is not valid, and for short text.
  if (text.size() >= kSimdMinBytes && simdjson::validate_utf8(text.data(), text.size())) {
    return std::string_view::npos;
  }
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    i += AsciiPrefix(p + i, n - i);
    if (i == n) break;
    size_t bad_len = 0;
    size_t len = ValidSequenceLength(p + i, n - i, &bad_len);
    if (len == 0) return i;
    i += len;
  }
  return std::string_view::npos;
}

size_t AppendReplacingInvalidUtf8(std::string_view text, std::string* out) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size();
  size_t replaced = 0;
  size_t i = 0;
  size_t run_start = 0;  // start of the valid bytes not yet appended
  out->reserve(out->size() + n);
  while (i < n) {
    i += AsciiPrefix(p + i, n - i);
    if (i == n) break;
    size_t bad_len = 0;
    size_t len = ValidSequenceLength(p + i, n - i, &bad_len);
    if (len > 0) {
      i += len;
      continue;
    }
    out->append(text.substr(run_start, i - run_start));
    out->append(kReplacement);
    ++replaced;
    i += bad_len;
    run_start = i;
  }
  out->append(text.substr(run_start));
  return replaced;
}

}  // namespace stoker
