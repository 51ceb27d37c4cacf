#include "records/webdataset_source.h"

#include <gtest/gtest.h>

#include "records/tar_writer.h"
#include "records/test_util.h"

namespace stoker {
namespace {

std::string Tar(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string tar;
  for (const auto& [name, data] : members) tar += TarMemberHeader(name, data.size()) + data + TarPadding(data.size());
  return tar + TarEnd(tar.size());
}

Result<std::vector<Record>> Samples(const std::string& tar) {
  auto source = OpenWebDatasetShard(MemorySource("s.tar", tar), Compression::kNone);
  return testing_util::ReadAllRecords(*source);
}

TEST(WebDatasetTest, SplitsNamesLikeTheReferenceRegex) {
  std::string_view key, ext;
  ASSERT_TRUE(SplitWebDatasetName("a/b/x.seg.png", &key, &ext));
  EXPECT_EQ(key, "a/b/x");
  EXPECT_EQ(ext, "seg.png");
  ASSERT_TRUE(SplitWebDatasetName("d.v/x.txt", &key, &ext));
  EXPECT_EQ(key, "d.v/x");
  ASSERT_TRUE(SplitWebDatasetName("dir/.hidden", &key, &ext));
  EXPECT_EQ(key, "dir/");
  EXPECT_EQ(ext, "hidden");
  ASSERT_TRUE(SplitWebDatasetName("./0001.jpg", &key, &ext));
  EXPECT_EQ(key, "./0001");
  EXPECT_FALSE(SplitWebDatasetName(".hidden", &key, &ext));
  EXPECT_FALSE(SplitWebDatasetName("noext", &key, &ext));
  EXPECT_FALSE(SplitWebDatasetName("a.b/c", &key, &ext));
  EXPECT_FALSE(SplitWebDatasetName("a/b.c/.x", &key, &ext));
  EXPECT_TRUE(IsWebDatasetMetaName("__index__"));
  EXPECT_TRUE(IsWebDatasetMetaName("__meta__/x.txt"));
  EXPECT_FALSE(IsWebDatasetMetaName("__key__.txt"));
}

TEST(WebDatasetTest, GroupsConsecutiveMembersByKey) {
  auto samples = Samples(Tar({{"s1.txt", "one"}, {"s1.JSON", "{}"}, {"__index__", "skip"},
                              {"noext", "ignored"}, {"s2.txt", ""}, {"s1.txt", "again"}}));
  ASSERT_TRUE(samples.ok()) << samples.status().ToString();
  ASSERT_EQ(samples->size(), 3u);
  const Record& a = (*samples)[0];
  EXPECT_EQ(a.key, "s1");
  ASSERT_EQ(a.fields.size(), 2u);
  EXPECT_EQ(a.fields[0].name, "txt");
  EXPECT_EQ(a.fields[0].bytes, "one");
  EXPECT_EQ(a.fields[1].name, "json");  // extensions are lower-cased
  EXPECT_EQ((*samples)[1].key, "s2");
  EXPECT_EQ((*samples)[1].fields[0].bytes, "");
  EXPECT_EQ((*samples)[2].key, "s1");  // not adjacent: a new sample, as webdataset does
  EXPECT_EQ((*samples)[2].index, 2u);
}

TEST(WebDatasetTest, DuplicateExtensionIsAnError) {
  Status st = Samples(Tar({{"k.txt", "a"}, {"k.TXT", "b"}})).status();
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("duplicate file name"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("s.tar"), std::string::npos);
}

}  // namespace
}  // namespace stoker
