// libFuzzer target: tokenizers' Split behaviors in RegexSplitter (the first byte picks the
// behavior, invert and one of a few patterns; the rest is the text, when it is valid UTF-8).
// Every behavior but Removed must give pieces that are the whole text, in order, none empty, and
// the same bytes as Isolated; Removed's pieces must be Isolated's minus the delimiters.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "text/regex_splitter.h"
#include "text/utf8.h"

namespace {

using stoker::RegexSplitter;

std::vector<std::string> Split(std::string_view pattern, RegexSplitter::Behavior b, bool invert,
                               std::string_view text) {
  auto s =
      RegexSplitter::Compile(pattern, RegexSplitter::Dialect::kOniguruma, "fuzz", true, b, invert);
  if (!s.ok()) __builtin_trap();
  std::vector<std::string> out;
  if (!(*s)->Split(text, [&](std::string_view p) { out.emplace_back(p); }).ok()) return {};
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const char* kPatterns[] = {
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
      R"([\x{4e00}-\x{9fa5}\x{3040}-\x{309f}\x{30a0}-\x{30ff}]+)", R"(\p{N}{1,3})", R"(-)",
      R"(\s)"};
  const uint8_t pick = data[0];
  std::string_view pattern = kPatterns[(pick >> 4) % 5];
  auto behavior = static_cast<RegexSplitter::Behavior>((pick >> 1) % 5);
  bool invert = pick & 1;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (stoker::FindInvalidUtf8(text) != std::string_view::npos) return 0;
  std::vector<std::string> isolated =
      Split(pattern, RegexSplitter::Behavior::kIsolated, false, text);
  std::vector<std::string> pieces = Split(pattern, behavior, invert, text);
  std::string joined;
  for (const std::string& p : pieces) {
    if (p.empty()) __builtin_trap();
    joined += p;
  }
  if (behavior != RegexSplitter::Behavior::kRemoved) {
    if (joined != text) __builtin_trap();
  } else {
    // Each kept piece is one of Isolated's pieces, in order.
    size_t i = 0;
    for (const std::string& p : pieces) {
      while (i < isolated.size() && isolated[i] != p) ++i;
      if (i == isolated.size()) __builtin_trap();
      ++i;
    }
  }
  return 0;
}
