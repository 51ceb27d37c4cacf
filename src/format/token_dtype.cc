// TokenDType helpers declared in include/stoker/token_source.h.
#include "format/token_convert.h"
#include "stoker/token_source.h"

namespace stoker {

size_t TokenDTypeSize(TokenDType dtype) {
  return VisitTokenDType(dtype, size_t{0}, [](auto t) { return sizeof(t); });
}

std::string_view TokenDTypeName(TokenDType dtype) {
  // Indexed by the dtype's code (1 to 10); 0 and codes past the end are not dtypes.
  static constexpr std::string_view kNames[] = {"unknown", "uint8",  "int8",    "int16",
                                                "int32",   "int64",  "float64", "float32",
                                                "uint16",  "uint32", "uint64"};
  const auto code = static_cast<size_t>(dtype);
  return kNames[code < std::size(kNames) ? code : 0];
}

Result<TokenDType> ParseTokenDType(std::string_view name) {
  for (int code = 1; code <= 10; ++code) {
    auto dtype = static_cast<TokenDType>(code);
    if (TokenDTypeName(dtype) == name) return dtype;
  }
  return InvalidArgument("unknown token dtype '" + std::string(name) +
                         "' (expected uint8, int8, int16, uint16, int32, uint32, int64, uint64, "
                         "float32 or float64)");
}

}  // namespace stoker
