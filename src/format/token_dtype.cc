// TokenDType helpers declared in include/stoker/token_source.h.
#include "stoker/token_source.h"

namespace stoker {

size_t TokenDTypeSize(TokenDType dtype) {
  switch (dtype) {
    case TokenDType::kUint8:
    case TokenDType::kInt8:
      return 1;
    case TokenDType::kInt16:
    case TokenDType::kUint16:
      return 2;
    case TokenDType::kInt32:
    case TokenDType::kUint32:
    case TokenDType::kFloat32:
      return 4;
    case TokenDType::kInt64:
    case TokenDType::kUint64:
    case TokenDType::kFloat64:
      return 8;
  }
  return 0;
}

std::string_view TokenDTypeName(TokenDType dtype) {
  switch (dtype) {
    case TokenDType::kUint8:
      return "uint8";
    case TokenDType::kInt8:
      return "int8";
    case TokenDType::kInt16:
      return "int16";
    case TokenDType::kInt32:
      return "int32";
    case TokenDType::kInt64:
      return "int64";
    case TokenDType::kFloat64:
      return "float64";
    case TokenDType::kFloat32:
      return "float32";
    case TokenDType::kUint16:
      return "uint16";
    case TokenDType::kUint32:
      return "uint32";
    case TokenDType::kUint64:
      return "uint64";
  }
  return "unknown";
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
