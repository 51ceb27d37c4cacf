#include "storage/ranged_source.h"

#include <gtest/gtest.h>

#include <mutex>
#include <vector>

namespace stoker::storage {
namespace {

TEST(RangedSourceTest, CutsAReadIntoPartsAndClampsToTheEnd) {
  const std::string bytes = "0123456789abcdefghij";  // 20 bytes
  std::vector<std::pair<uint64_t, size_t>> calls;
  auto source = NewRangedSource("mem://x", bytes.size(), /*part_bytes=*/6,
                                [&](uint64_t offset, size_t n, char* out) {
                                  calls.emplace_back(offset, n);
                                  bytes.copy(out, n, offset);
                                  return Status::OK();
                                });
  std::string out(30, '\0');
  Result<size_t> got = source->ReadAt(3, 30, out.data());
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 17u);
  EXPECT_EQ(out.substr(0, 17), bytes.substr(3));
  const std::vector<std::pair<uint64_t, size_t>> want = {{3, 6}, {9, 6}, {15, 5}};
  EXPECT_EQ(calls, want);
  calls.clear();
  EXPECT_EQ(source->ReadAt(20, 5, out.data()).value(), 0u);
  EXPECT_TRUE(calls.empty());  // nothing fetched past the end
}

TEST(RangedSourceTest, AFailedPartFailsTheRead) {
  auto source = NewRangedSource("mem://x", 100, 10, [](uint64_t offset, size_t, char*) {
    return offset == 20 ? Unavailable("part at 20 failed") : Status::OK();
  });
  std::string out(100, '\0');
  Status status = source->ReadAt(0, 100, out.data()).status();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace stoker::storage
