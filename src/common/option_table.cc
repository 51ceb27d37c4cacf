#include "common/option_table.h"

#include <string>

namespace stoker {
namespace {

Status NotWhole(std::string_view name, std::string_view text, const std::string& want) {
  return InvalidArgument(std::string(name) + ": must be a whole number " + want + ", got '" +
                         std::string(text) + "'");
}

}  // namespace

std::string_view OptionKindName(OptionKind kind) {
  switch (kind) {
    case OptionKind::kBool:
      return "bool";
    case OptionKind::kInt:
      return "int";
    case OptionKind::kUnsigned:
      return "unsigned";
    case OptionKind::kText:
      return "text";
    case OptionKind::kChoice:
      return "choice";
    case OptionKind::kSize:
      return "size";
    case OptionKind::kCount:
      return "count";
    case OptionKind::kOther:
      break;
  }
  return "other";
}

Result<bool> ParseOptionBool(std::string_view name, std::string_view text) {
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  return InvalidArgument(std::string(name) + ": must be true or false, got '" + std::string(text) +
                         "'");
}

Result<uint64_t> ParseOptionUnsigned(std::string_view name, std::string_view text, uint64_t min,
                                     uint64_t max) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);  // digits only: no sign, no spaces
  if (text.empty() || ptr != end || ec != std::errc() || v < min || v > max) {
    return NotWhole(name, text, ">= " + std::to_string(min) + " and <= " + std::to_string(max));
  }
  return v;
}

Result<int64_t> ParseOptionInt(std::string_view name, std::string_view text, int64_t min,
                               int64_t max) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ptr != end || ec != std::errc() || v < min || v > max) {
    return NotWhole(name, text, ">= " + std::to_string(min) + " and <= " + std::to_string(max));
  }
  return v;
}

}  // namespace stoker
