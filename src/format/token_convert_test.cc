#include "format/token_convert.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

namespace stoker {
namespace {

// Counts that cover a partial block, whole blocks and a tail after whole blocks.
constexpr uint64_t kCounts[] = {0, 1, 255, 256, 257, 1000};
constexpr int64_t kSentinel = -7;

template <typename In>
std::vector<uint8_t> Bytes(const std::vector<In>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(In));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// Valid ids spread over the type's range (largest id included), so a wrong lane or width shows.
template <typename In, typename Out>
std::vector<In> ValidValues(uint64_t count) {
  const uint64_t max = std::min<uint64_t>(std::numeric_limits<In>::max(),
                                          static_cast<uint64_t>(std::numeric_limits<Out>::max()));
  std::vector<In> v(count);
  for (uint64_t i = 0; i < count; ++i) v[i] = static_cast<In>((i * 2654435761ULL) % (max + 1));
  if (count > 3) v[3] = static_cast<In>(max);
  return v;
}

template <typename In, typename Out>
void ExpectDecodes(TokenDType dtype) {
  for (uint64_t count : kCounts) {
    std::vector<In> values = ValidValues<In, Out>(count);
    std::vector<uint8_t> bytes = Bytes(values);
    std::vector<Out> out(count + 1, static_cast<Out>(kSentinel));
    EXPECT_EQ(DecodeTokens(bytes.data(), dtype, count, out.data()), std::nullopt) << count;
    for (uint64_t i = 0; i < count; ++i) {
      ASSERT_EQ(out[i], static_cast<Out>(values[i])) << "count " << count << " index " << i;
    }
    EXPECT_EQ(out[count], static_cast<Out>(kSentinel)) << "wrote past count " << count;
  }
}

// One invalid value at `bad`: its index comes back and nothing from it on is written.
template <typename In, typename Out>
void ExpectRejects(TokenDType dtype, In invalid) {
  constexpr uint64_t kCount = 1000;
  for (uint64_t bad :
       {uint64_t{0}, uint64_t{5}, uint64_t{255}, uint64_t{256}, uint64_t{700}, uint64_t{999}}) {
    std::vector<In> values = ValidValues<In, Out>(kCount);
    values[bad] = invalid;
    std::vector<uint8_t> bytes = Bytes(values);
    std::vector<Out> out(kCount, static_cast<Out>(kSentinel));
    EXPECT_EQ(DecodeTokens(bytes.data(), dtype, kCount, out.data()), std::optional<uint64_t>(bad));
    for (uint64_t i = 0; i < bad; ++i) ASSERT_EQ(out[i], static_cast<Out>(values[i])) << i;
    for (uint64_t i = bad; i < kCount; ++i) {
      ASSERT_EQ(out[i], static_cast<Out>(kSentinel)) << "bad " << bad << " index " << i;
    }
  }
}

TEST(TokenConvertTest, DecodesEveryIntegerTypeAcrossBlocks) {
  ExpectDecodes<uint8_t, int32_t>(TokenDType::kUint8);
  ExpectDecodes<uint8_t, int64_t>(TokenDType::kUint8);
  ExpectDecodes<int8_t, int32_t>(TokenDType::kInt8);
  ExpectDecodes<int16_t, int64_t>(TokenDType::kInt16);
  ExpectDecodes<uint16_t, int32_t>(TokenDType::kUint16);
  ExpectDecodes<uint16_t, int64_t>(TokenDType::kUint16);
  ExpectDecodes<int32_t, int32_t>(TokenDType::kInt32);
  ExpectDecodes<uint32_t, int32_t>(TokenDType::kUint32);
  ExpectDecodes<uint32_t, int64_t>(TokenDType::kUint32);
  ExpectDecodes<int64_t, int64_t>(TokenDType::kInt64);
  ExpectDecodes<uint64_t, int32_t>(TokenDType::kUint64);
  ExpectDecodes<uint64_t, int64_t>(TokenDType::kUint64);
}

TEST(TokenConvertTest, RejectsNegativeValuesAtTheirIndex) {
  ExpectRejects<int8_t, int32_t>(TokenDType::kInt8, -1);
  ExpectRejects<int16_t, int64_t>(TokenDType::kInt16, std::numeric_limits<int16_t>::min());
  ExpectRejects<int32_t, int64_t>(TokenDType::kInt32, -100);
  ExpectRejects<int64_t, int64_t>(TokenDType::kInt64, -1);
}

TEST(TokenConvertTest, RejectsValuesTooLargeForTheOutputType) {
  ExpectRejects<uint32_t, int32_t>(TokenDType::kUint32, 0x80000000u);
  ExpectRejects<int64_t, int32_t>(TokenDType::kInt64, int64_t{1} << 31);
  ExpectRejects<uint64_t, int32_t>(TokenDType::kUint64, uint64_t{1} << 40);
  ExpectRejects<uint64_t, int64_t>(TokenDType::kUint64, ~uint64_t{0});
}

// EncodeTokens checks a whole run at once (TokensFit) before converting: every length around
// its block of 16, and a bad id (one past the type's maximum, or negative) at every position,
// give the converted bytes, or the index of the first bad id.
template <typename Stored>
void ExpectEncodes(TokenDType dtype) {
  const int64_t max = std::min<int64_t>(std::numeric_limits<Stored>::max(), INT32_MAX);
  for (size_t n : {0, 1, 15, 16, 17, 33, 100}) {
    std::vector<int32_t> ids(n);
    for (size_t i = 0; i < n; ++i) ids[i] = static_cast<int32_t>((i * 7919) % (max + 1));
    if (n > 0) ids[n / 2] = static_cast<int32_t>(max);
    std::vector<uint8_t> out(n * sizeof(Stored) + 1);
    EXPECT_TRUE(TokensFit(ids.data(), n, static_cast<uint64_t>(max)));
    ASSERT_FALSE(EncodeTokens(ids.data(), n, dtype, out.data()).has_value()) << n;
    std::vector<uint8_t> stored(out.size());
    StoreFittingTokens(ids.data(), n, dtype, stored.data());
    EXPECT_EQ(stored, out) << n;
    for (size_t i = 0; i < n; ++i) {
      Stored v;
      std::memcpy(&v, out.data() + i * sizeof(Stored), sizeof(Stored));
      ASSERT_EQ(static_cast<int64_t>(v), ids[i]) << n << " " << i;
    }
    for (size_t bad = 0; bad < n; ++bad) {
      for (int64_t value : {int64_t{-1}, max + 1}) {
        if (value > INT32_MAX) continue;
        std::vector<int32_t> b = ids;
        b[bad] = static_cast<int32_t>(value);
        if (bad + 3 < n) b[bad + 3] = -5;  // a later bad id does not hide the first
        EXPECT_FALSE(TokensFit(b.data(), n, static_cast<uint64_t>(max)));
        EXPECT_EQ(EncodeTokens(b.data(), n, dtype, out.data()), std::optional<uint64_t>(bad));
      }
    }
  }
}

TEST(TokenConvertTest, EncodesRunsAndFindsTheFirstIdThatDoesNotFit) {
  ExpectEncodes<uint8_t>(TokenDType::kUint8);
  ExpectEncodes<uint16_t>(TokenDType::kUint16);
  ExpectEncodes<int32_t>(TokenDType::kInt32);
  ExpectEncodes<int64_t>(TokenDType::kInt64);
}

}  // namespace
}  // namespace stoker
