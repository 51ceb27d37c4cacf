#include "stoker/status.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace stoker {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  STOKER_ASSIGN_OR_RETURN(int h, Half(x));
  return Half(h);
}

TEST(StatusTest, OkIsDefault) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "ok");
}

TEST(StatusTest, CarriesCodeAndContext) {
  Status s = Corruption("bad magic").WithContext("shard-0.idx at offset 0");
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_EQ(s.ToString(), "corruption: shard-0.idx at offset 0: bad magic");
}

TEST(StatusTest, ErrnoMapsNotFound) {
  EXPECT_EQ(ErrnoStatus("open x", ENOENT).code(), StatusCode::kNotFound);
  EXPECT_EQ(ErrnoStatus("open x", EACCES).code(), StatusCode::kIOError);
}

TEST(ResultTest, PropagatesErrors) {
  EXPECT_EQ(*Quarter(8), 2);
  Result<int> r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "odd: 3");
}

}  // namespace
}  // namespace stoker
