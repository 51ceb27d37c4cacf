#include "records/record_store.h"

#include <gtest/gtest.h>

#include "records/record_source.h"
#include "records/tar_writer.h"
#include "records/test_util.h"
#include "storage/memory_backend.h"

namespace stoker {
namespace {

// A tar of `n` samples "k<i>" with a .txt member each, bigger than one 8 MiB part when `pad`.
std::string Tar(int n, size_t pad) {
  std::string tar;
  for (int i = 0; i < n; ++i) {
    std::string body = "text " + std::to_string(i) + std::string(i == 0 ? pad : 0, 'x');
    tar += TarMemberHeader("k" + std::to_string(i) + ".txt", body.size()) + body +
           TarPadding(body.size());
  }
  return tar + TarEnd(tar.size());
}

class RecordStoreTest : public ::testing::Test {
 protected:
  void Put(const std::string& uri, const std::string& bytes) {
    ASSERT_TRUE(storage::WriteAll(*backend_, uri, bytes).ok());
  }
  std::shared_ptr<storage::Backend> backend_ = storage::NewMemoryBackend();
  RecordStore store_{backend_};
};

TEST_F(RecordStoreTest, GlobMatchesOneDirectoryLevelInOrder) {
  Put("s3://b/d/train-1.tar", "x");
  Put("s3://b/d/train-0.tar", "yy");
  Put("s3://b/d/sub/train-2.tar", "z");
  Put("s3://b/d/other.tfrecord", "w");
  auto got = store_.Glob("s3://b/d/train-*.tar");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].uri, "s3://b/d/train-0.tar");
  EXPECT_EQ((*got)[0].size_bytes, 2u);
  EXPECT_EQ((*got)[1].uri, "s3://b/d/train-1.tar");
  auto dir = store_.ListDir("s3://b/d");
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(dir->size(), 4u);
  auto http = store_.Glob("https://host/d/*.tar");
  ASSERT_FALSE(http.ok());
  EXPECT_NE(http.status().message().find("cannot be listed"), std::string::npos);
  EXPECT_TRUE(HasGlobPattern("a/*.tar"));
  EXPECT_FALSE(HasGlobPattern("a/\\*.tar"));
  EXPECT_FALSE(HasGlobPattern("a/{0..9}.tar"));
}

TEST_F(RecordStoreTest, SmallObjectsAreReadOnce) {
  Put("s3://b/ds/index.json", "first");
  ASSERT_EQ(*store_.ReadAll("s3://b/ds/index.json"), "first");
  Put("s3://b/ds/index.json", "second");
  RecordStore copy = store_;  // copies share what was read
  EXPECT_EQ(*copy.ReadAll("s3://b/ds/index.json"), "first");
  EXPECT_EQ(store_.ReadAll("s3://b/ds/missing.json").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_.Exists("s3://b/ds/index.json"));
  EXPECT_FALSE(store_.Exists("s3://b/ds/missing.json"));
}

TEST_F(RecordStoreTest, ARemoteShardReadsLikeALocalOneAcrossParts) {
  const std::string tar = Tar(3, (size_t{9} << 20));  // the first member spans two parts
  Put("s3://b/wds/a.tar", tar);
  RecordShard shard;
  shard.path = "s3://b/wds/a.tar";
  shard.format = RecordFormat::kWebDataset;
  shard.store = store_;
  shard.size_bytes = shard.object_bytes = tar.size();
  auto source = OpenRecordShard(shard);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  auto records = testing_util::ReadAllRecords(**source);
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  ASSERT_EQ(records->size(), 3u);
  EXPECT_EQ((*records)[2].key, "k2");
  // A size that the listing got wrong is an error of the read that passes the real end.
  shard.object_bytes = tar.size() + 4096;
  auto wrong = OpenRecordShard(shard);
  Status st = wrong.ok() ? testing_util::ReadAllRecords(**wrong).status() : wrong.status();
  EXPECT_FALSE(st.ok());
}

}  // namespace
}  // namespace stoker
