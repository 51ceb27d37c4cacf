#include "cache/cache_defaults.h"

#include <cstdlib>

#include <gtest/gtest.h>

namespace stoker::cache {
namespace {

TEST(CacheDefaults, DirFollowsXdgCacheHome) {
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old == nullptr ? "" : old;
  ::setenv("XDG_CACHE_HOME", "/scratch/me/.cache", 1);
  EXPECT_EQ(DefaultCacheDir(), "/scratch/me/.cache/stoker");
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(DefaultCacheDir().rfind("/tmp/stoker-cache-", 0), 0u);
  if (old != nullptr) ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
}

TEST(CacheDefaults, BudgetIsCappedAndMeasuredOnAnExistingParent) {
  Result<uint64_t> budget = DefaultBudgetBytes("/tmp/does/not/exist/yet");
  ASSERT_TRUE(budget.ok()) << budget.status().ToString();
  EXPECT_GT(*budget, 0u);
  EXPECT_LE(*budget, kDefaultBudgetBytes);
}

TEST(CacheDefaults, ParsesSizesAndNamesTheFlag) {
  EXPECT_EQ(ParseCacheSize("200GiB").value(), uint64_t{200} << 30);
  EXPECT_EQ(ParseCacheSize("1.5TiB").value(), uint64_t{3} << 39);
  EXPECT_EQ(ParseCacheSize("500GB").value(), uint64_t{500} * 1000 * 1000 * 1000);
  Status bad = ParseCacheSize("lots").status();
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("--cache-size"), std::string::npos);
  EXPECT_NE(ParseCacheSize("0", "cache_size").status().message().find("cache_size"),
            std::string::npos);
}

}  // namespace
}  // namespace stoker::cache
