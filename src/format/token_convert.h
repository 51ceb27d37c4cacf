// Conversion of stored token elements (any TokenDType, little-endian, possibly unaligned) to the
// int32/int64 ids that TokenSource::Read returns, and of int32 ids to a stored dtype.
//
// Token ids are non-negative integers: negative values, non-integral floats and values too large
// for the output type are rejected. Free functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>

#include "stoker/status.h"
#include "stoker/token_source.h"

namespace stoker {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "stoker's file formats are little-endian");

// Calls f(T{}) with the element type T that `dtype` stores (uint8_t ... uint64_t, float, double)
// and returns its result; `otherwise` for a code that is not a TokenDType. The one switch over
// dtypes: f uses `if constexpr` for what only some element types can do.
template <typename R, typename F>
inline R VisitTokenDType(TokenDType dtype, R otherwise, F&& f) {
  switch (dtype) {
    case TokenDType::kUint8:
      return f(uint8_t{});
    case TokenDType::kInt8:
      return f(int8_t{});
    case TokenDType::kInt16:
      return f(int16_t{});
    case TokenDType::kInt32:
      return f(int32_t{});
    case TokenDType::kInt64:
      return f(int64_t{});
    case TokenDType::kFloat64:
      return f(double{});
    case TokenDType::kFloat32:
      return f(float{});
    case TokenDType::kUint16:
      return f(uint16_t{});
    case TokenDType::kUint32:
      return f(uint32_t{});
    case TokenDType::kUint64:
      return f(uint64_t{});
  }
  return otherwise;
}

// Largest token id that `dtype` can store (for integer dtypes; 2^53 for floats).
uint64_t MaxTokenForDType(TokenDType dtype);
// Whether every id is in [0, max_id] (a branch-free max over blocks of 16, which the compiler
// turns into vector code even at -O2): the fast check before a per-id search for the bad one.
bool TokensFit(const int32_t* ids, uint64_t count, uint64_t max_id);
bool IsIntegerDType(TokenDType dtype);

// Converts `count` elements at `src` to `out`. Returns the index of the first element that is not
// a valid id for the output type (nothing after it is converted), or nullopt on success.
std::optional<uint64_t> DecodeTokens(const uint8_t* src, TokenDType dtype, uint64_t count,
                                     int32_t* out);
std::optional<uint64_t> DecodeTokens(const uint8_t* src, TokenDType dtype, uint64_t count,
                                     int64_t* out);

// Stores `count` ids as `dtype` (an integer dtype) at `dst`. Returns the index of the first id that
// does not fit (negative or above MaxTokenForDType), or nullopt on success.
std::optional<uint64_t> EncodeTokens(const int32_t* ids, uint64_t count, TokenDType dtype,
                                     uint8_t* dst);
// EncodeTokens without the check, for ids the caller has checked with TokensFit.
void StoreFittingTokens(const int32_t* ids, uint64_t count, TokenDType dtype, uint8_t* dst);

// A Corruption status for element `index` of a token array starting at byte `base_offset` of
// `file`: "<file>: at byte <offset>: token value does not fit <out type> ...".
Status BadTokenStatus(const std::string& file, uint64_t base_offset, TokenDType dtype,
                      uint64_t index, const uint8_t* src, const char* out_type);

}  // namespace stoker

namespace stoker {

// Reads `count` tokens starting at byte `pos` of `data` (a file of `size` bytes named `file`),
// stepping `stride` elements between tokens (1 = contiguous). kCorruption, naming the file and
// byte offset, if the range is outside the file or a value is not a valid id for the output type.
Status ReadTokensAt(const uint8_t* data, uint64_t size, const std::string& file, uint64_t pos,
                    TokenDType dtype, uint64_t count, uint64_t stride, int32_t* out);
Status ReadTokensAt(const uint8_t* data, uint64_t size, const std::string& file, uint64_t pos,
                    TokenDType dtype, uint64_t count, uint64_t stride, int64_t* out);

// kOutOfRange unless doc < num_documents and [offset, offset + count) lies within `length`.
Status CheckReadRange(uint64_t doc, uint64_t num_documents, uint64_t length, uint64_t offset,
                      uint64_t count);

}  // namespace stoker
