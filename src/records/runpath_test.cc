// RunpathDirs reads the RUNPATH of the binary holding an address: records_tests is linked with
// two extra entries (tests/CMakeLists.txt), one of them relative to $ORIGIN.
#include "records/runpath.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

namespace stoker {
namespace {

void AFunctionOfThisBinary() {}

TEST(RunpathTest, ListsTheDirectoriesOfTheBinaryHoldingTheAddress) {
  const std::string dir = std::filesystem::read_symlink("/proc/self/exe").parent_path().string();
  const std::vector<std::string> dirs =
      RunpathDirs(reinterpret_cast<const void*>(&AFunctionOfThisBinary));
  EXPECT_THAT(dirs, testing::Contains("/stoker-runpath-test"));
  EXPECT_THAT(dirs, testing::Contains(dir + "/runpath-test"));  // $ORIGIN/runpath-test
  for (const std::string& d : dirs) EXPECT_EQ(d.find("ORIGIN"), std::string::npos) << d;
}

TEST(RunpathTest, AnAddressOutsideEveryObjectHasNone) { EXPECT_TRUE(RunpathDirs(nullptr).empty()); }

}  // namespace
}  // namespace stoker
