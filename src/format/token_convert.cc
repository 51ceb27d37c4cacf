#include "format/token_convert.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "common/load.h"

namespace stoker {
namespace {

// Element by element, stopping at the first invalid value: floats, and the fallback for a block of
// integers that holds an invalid one.
template <typename In, typename Out>
std::optional<uint64_t> DecodeChecked(const uint8_t* src, uint64_t count, Out* out) {
  for (uint64_t i = 0; i < count; ++i) {
    In v = LoadAs<In>(src + i * sizeof(In));
    if constexpr (std::is_floating_point_v<In>) {
      // 2^31 or 2^63: exact in float and double, unlike kMax itself.
      const In limit = static_cast<In>(std::ldexp(1.0, std::numeric_limits<Out>::digits));
      if (!(v >= 0) || v != std::floor(v) || v >= limit) return i;
    } else {
      if constexpr (std::is_signed_v<In>) {
        if (v < 0) return i;
      }
      if constexpr (sizeof(In) >= sizeof(Out)) {
        constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<Out>::max());
        if (static_cast<uint64_t>(v) > kMax) return i;
      }
    }
    out[i] = static_cast<Out>(v);
  }
  return std::nullopt;
}

// Integers are decoded in blocks of a fixed size, written so that GCC vectorises them at -O2 (its
// "very cheap" cost model takes only loops with a known trip count and no alias checks; an early
// exit inside the loop defeats it at any level). This is the loader's hottest loop.
constexpr uint64_t kBlock = 256;

// Every In fits Out: unsigned and narrower (uint8/uint16 -> int32, uint32 -> int64).
template <typename In, typename Out>
constexpr bool kAlwaysValid = std::is_unsigned_v<In> && sizeof(In) < sizeof(Out);

template <typename In, typename Out>
void ConvertBlock(const uint8_t* __restrict src, Out* __restrict out) {
  for (uint64_t j = 0; j < kBlock; ++j) out[j] = static_cast<Out>(LoadAs<In>(src + j * sizeof(In)));
}

// Bits that no valid id has: Out's max is 2^k - 1, and a negative In sign-extends into them.
template <typename In, typename Out>
bool BlockHasInvalid(const uint8_t* __restrict src) {
  constexpr uint64_t kInvalidBits = ~static_cast<uint64_t>(std::numeric_limits<Out>::max());
  uint64_t bits = 0;
  for (uint64_t j = 0; j < kBlock; ++j) {
    bits |= static_cast<uint64_t>(static_cast<int64_t>(LoadAs<In>(src + j * sizeof(In))));
  }
  return (bits & kInvalidBits) != 0;
}

template <typename In, typename Out>
std::optional<uint64_t> DecodeAs(const uint8_t* src, uint64_t count, Out* out) {
  if constexpr (std::is_floating_point_v<In>) {
    return DecodeChecked<In, Out>(src, count, out);
  } else {
    uint64_t i = 0;
    for (; i + kBlock <= count; i += kBlock) {
      const uint8_t* block = src + i * sizeof(In);
      if constexpr (!kAlwaysValid<In, Out>) {
        if (BlockHasInvalid<In, Out>(block)) {
          auto bad = DecodeChecked<In, Out>(block, kBlock, out + i);
          return i + *bad;
        }
      }
      ConvertBlock<In, Out>(block, out + i);
    }
    auto bad = DecodeChecked<In, Out>(src + i * sizeof(In), count - i, out + i);
    if (bad) return i + *bad;
    return std::nullopt;
  }
}

template <typename Out>
std::optional<uint64_t> Decode(const uint8_t* src, TokenDType dtype, uint64_t count, Out* out) {
  // The loader's hot path keeps its own switch: through VisitTokenDType, random 1,000-token reads
  // (stoker_dataset_benchmark's RandomDocumentReads) took 8-10% longer with GCC 12.
  switch (dtype) {
    case TokenDType::kUint8:
      return DecodeAs<uint8_t>(src, count, out);
    case TokenDType::kInt8:
      return DecodeAs<int8_t>(src, count, out);
    case TokenDType::kInt16:
      return DecodeAs<int16_t>(src, count, out);
    case TokenDType::kInt32:
      return DecodeAs<int32_t>(src, count, out);
    case TokenDType::kInt64:
      return DecodeAs<int64_t>(src, count, out);
    case TokenDType::kFloat64:
      return DecodeAs<double>(src, count, out);
    case TokenDType::kFloat32:
      return DecodeAs<float>(src, count, out);
    case TokenDType::kUint16:
      return DecodeAs<uint16_t>(src, count, out);
    case TokenDType::kUint32:
      return DecodeAs<uint32_t>(src, count, out);
    case TokenDType::kUint64:
      return DecodeAs<uint64_t>(src, count, out);
  }
  return count == 0 ? std::nullopt : std::optional<uint64_t>(0);
}

template <typename Stored>
void StoreAs(const int32_t* ids, uint64_t count, uint8_t* dst) {
  if constexpr (std::is_same_v<Stored, int32_t>) {
    if (count > 0) std::memcpy(dst, ids, count * sizeof(int32_t));
  } else {
    for (uint64_t i = 0; i < count; ++i) {
      Stored v = static_cast<Stored>(ids[i]);
      std::memcpy(dst + i * sizeof(Stored), &v, sizeof(Stored));
    }
  }
}

template <typename Stored>
std::optional<uint64_t> EncodeAs(const int32_t* ids, uint64_t count, uint8_t* dst) {
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<Stored>::max());
  // The whole run checked at once, then a plain conversion: the per-id loop below runs only to
  // find the first bad id.
  if (TokensFit(ids, count, kMax)) {
    StoreAs<Stored>(ids, count, dst);
    return std::nullopt;
  }
  for (uint64_t i = 0; i < count; ++i) {
    if (ids[i] < 0 || static_cast<uint64_t>(ids[i]) > kMax) return i;
    Stored v = static_cast<Stored>(ids[i]);
    std::memcpy(dst + i * sizeof(Stored), &v, sizeof(Stored));
  }
  return std::nullopt;
}

}  // namespace

bool TokensFit(const int32_t* ids, uint64_t count, uint64_t max_id) {
  // As unsigned, a negative id is above INT32_MAX, so one maximum answers both questions.
  const auto fit = static_cast<uint32_t>(std::min<uint64_t>(max_id, INT32_MAX));
  uint32_t top[16] = {};
  uint64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    for (int k = 0; k < 16; ++k) top[k] = std::max(top[k], static_cast<uint32_t>(ids[i + k]));
  }
  for (; i < count; ++i) top[0] = std::max(top[0], static_cast<uint32_t>(ids[i]));
  uint32_t all = 0;
  for (uint32_t t : top) all = std::max(all, t);
  return all <= fit;
}

bool IsIntegerDType(TokenDType dtype) {
  return VisitTokenDType(dtype, false, [](auto t) { return std::is_integral_v<decltype(t)>; });
}

uint64_t MaxTokenForDType(TokenDType dtype) {
  return VisitTokenDType(dtype, uint64_t{0}, [](auto t) -> uint64_t {
    using T = decltype(t);
    if constexpr (std::is_floating_point_v<T>) {
      return 1ULL << 53;
    } else {
      return static_cast<uint64_t>(std::numeric_limits<T>::max());
    }
  });
}

std::optional<uint64_t> DecodeTokens(const uint8_t* src, TokenDType dtype, uint64_t count,
                                     int32_t* out) {
  return Decode(src, dtype, count, out);
}

std::optional<uint64_t> DecodeTokens(const uint8_t* src, TokenDType dtype, uint64_t count,
                                     int64_t* out) {
  return Decode(src, dtype, count, out);
}

std::optional<uint64_t> EncodeTokens(const int32_t* ids, uint64_t count, TokenDType dtype,
                                     uint8_t* dst) {
  // A float or unknown dtype stores no id: the first one is bad.
  const auto none = count == 0 ? std::nullopt : std::optional<uint64_t>(0);
  return VisitTokenDType(dtype, none, [&](auto t) {
    if constexpr (std::is_integral_v<decltype(t)>) {
      return EncodeAs<decltype(t)>(ids, count, dst);
    } else {
      return none;
    }
  });
}

void StoreFittingTokens(const int32_t* ids, uint64_t count, TokenDType dtype, uint8_t* dst) {
  VisitTokenDType(dtype, false, [&](auto t) {
    if constexpr (std::is_integral_v<decltype(t)>) StoreAs<decltype(t)>(ids, count, dst);
    return true;
  });
}

Status BadTokenStatus(const std::string& file, uint64_t base_offset, TokenDType dtype,
                      uint64_t index, const uint8_t* src, const char* out_type) {
  size_t item = TokenDTypeSize(dtype);
  const uint8_t* p = src + index * item;
  // uint8 and uint16 values always fit, so they never get here: "?" as for an unknown dtype.
  const std::string value = VisitTokenDType(dtype, std::string("?"), [&](auto t) {
    using T = decltype(t);
    return std::is_unsigned_v<T> && sizeof(T) < 4 ? std::string("?") : std::to_string(LoadAs<T>(p));
  });
  return Corruption(file + ": at byte " + std::to_string(base_offset + index * item) +
                    ": token value " + value + " (" + std::string(TokenDTypeName(dtype)) +
                    ") is not a valid " + out_type + " token id");
}

}  // namespace stoker

namespace stoker {
namespace {

template <typename Out>
Status ReadAt(const uint8_t* data, uint64_t size, const std::string& file, uint64_t pos,
              TokenDType dtype, uint64_t count, uint64_t stride, Out* out) {
  const uint64_t item = TokenDTypeSize(dtype);
  if (count == 0) return Status::OK();
  // The last element read starts at pos + (count-1)*stride*item; written to avoid overflow.
  const uint64_t step = stride * item;
  if (pos > size || (count - 1) > (size - pos) / (step == 0 ? 1 : step) ||
      pos + (count - 1) * step + item > size) {
    return Corruption(file + ": at byte " + std::to_string(pos) + ": " + std::to_string(count) +
                      " tokens run past the end of the file (" + std::to_string(size) + " bytes)");
  }
  const uint8_t* src = data + pos;
  if (stride == 1) {
    auto bad = DecodeTokens(src, dtype, count, out);
    if (bad)
      return BadTokenStatus(file, pos, dtype, *bad, src, sizeof(Out) == 4 ? "int32" : "int64");
    return Status::OK();
  }
  for (uint64_t i = 0; i < count; ++i) {
    const uint8_t* p = src + i * step;
    if (DecodeTokens(p, dtype, 1, out + i)) {
      return BadTokenStatus(file, pos + i * step, dtype, 0, p,
                            sizeof(Out) == 4 ? "int32" : "int64");
    }
  }
  return Status::OK();
}

}  // namespace

Status ReadTokensAt(const uint8_t* data, uint64_t size, const std::string& file, uint64_t pos,
                    TokenDType dtype, uint64_t count, uint64_t stride, int32_t* out) {
  return ReadAt(data, size, file, pos, dtype, count, stride, out);
}

Status ReadTokensAt(const uint8_t* data, uint64_t size, const std::string& file, uint64_t pos,
                    TokenDType dtype, uint64_t count, uint64_t stride, int64_t* out) {
  return ReadAt(data, size, file, pos, dtype, count, stride, out);
}

Status CheckReadRange(uint64_t doc, uint64_t num_documents, uint64_t length, uint64_t offset,
                      uint64_t count) {
  if (doc >= num_documents) {
    return OutOfRange("document " + std::to_string(doc) + " does not exist (there are " +
                      std::to_string(num_documents) + ")");
  }
  if (offset > length || count > length - offset) {
    return OutOfRange("tokens [" + std::to_string(offset) + ", " + std::to_string(offset + count) +
                      ") are outside document " + std::to_string(doc) + " of length " +
                      std::to_string(length));
  }
  return Status::OK();
}

}  // namespace stoker
