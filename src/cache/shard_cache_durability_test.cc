// Durability without fsync on the download path: an object is published tagged with the boot
// that wrote it, and one tagged by an earlier boot (a power loss may have torn it: its rename
// reached the disk, its data did not) is re-hashed before first use. A reboot is simulated by
// rewriting the tag in the meta file to another boot id; a torn file by overwriting its bytes
// in place (as zeros, which is what unwritten blocks read back as, or as one flipped byte).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "cache/cache_testing.h"
#include "cache/shard_cache.h"
#include "cache/shard_cache_internal.h"
#include "common/file_util.h"
#include "common/temp_dir.h"

namespace stoker::cache {
namespace {

using testing::ObjectBytes;
using testing::TestBackend;
using testing::Xxh3Of;

constexpr char kEarlierBoot[] = "00000000-0000-4000-8000-000000000000";

class ShardCacheDurabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(BootId().empty()) << "no /proc/sys/kernel/random/boot_id";
    dir_ = TempDir::Create("stoker-cache-durable-").value();
    auto memory = storage::NewMemoryBackend();
    bytes_ = ObjectBytes(kUri, 20000);
    ASSERT_TRUE(storage::WriteAll(*memory, kUri, bytes_).ok());
    backend_ = std::make_shared<TestBackend>(std::move(memory));
  }

  CacheOptions Options(bool fsync, int threads = 0) {
    CacheOptions o;
    o.dir = dir_->Join("cache");
    o.budget_bytes = 1 << 20;
    o.download_threads = threads;
    o.poll_ms = 2;
    o.fsync = fsync;
    return o;
  }
  CacheRequest Request() const { return {kUri, bytes_.size(), Xxh3Of(bytes_)}; }
  std::string MetaPath() const { return dir_->Join("cache/meta/" + ObjectKey(kUri) + ".json"); }
  std::string DataPath() const { return dir_->Join("cache/data/" + ObjectKey(kUri)); }

  // Downloads the object with a fresh cache and returns its meta file.
  ObjectMeta Publish(bool fsync) {
    auto cache = ShardCache::Open(Options(fsync), backend_).value();
    Result<CachedFile> file = cache->Acquire(Request());
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    return ReadMeta(MetaPath()).value();
  }
  // As if the machine rebooted since the object was published.
  void Reboot() {
    ObjectMeta meta = ReadMeta(MetaPath()).value();
    ASSERT_FALSE(meta.unsynced_boot.empty());
    meta.unsynced_boot = kEarlierBoot;
    ASSERT_TRUE(WriteMeta(MetaPath(), meta).ok());
  }
  // Overwrites `n` bytes at `offset` of the published file in place.
  void Tear(uint64_t offset, const std::string& with) {
    const int fd = ::open(DataPath().c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, with.data(), with.size(), static_cast<off_t>(offset)),
              static_cast<ssize_t>(with.size()));
    ::close(fd);
  }
  // Acquires with a new cache (a new process after the reboot); returns the file's bytes.
  std::string AcquireAfterReboot(CacheStats* stats, int threads = 0) {
    auto cache = ShardCache::Open(Options(false, threads), backend_).value();
    if (threads > 0) cache->Schedule({Request()});
    Result<CachedFile> file = cache->Acquire(Request());
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    *stats = cache->Stats();
    return file.ok() ? ReadFileToString(file->path()).value() : "";
  }

  static constexpr char kUri[] = "s3://bucket/data/shard_0.bin";
  std::unique_ptr<TempDir> dir_;
  std::string bytes_;
  std::shared_ptr<TestBackend> backend_;
};

TEST_F(ShardCacheDurabilityTest, UnsyncedPublishNamesThisBootAndIsAHitInIt) {
  const ObjectMeta meta = Publish(/*fsync=*/false);
  EXPECT_EQ(meta.unsynced_boot, BootId());
  EXPECT_EQ(meta.xxh3, Xxh3Of(bytes_));
  // The same boot (a restarted or second process): trusted as it is, no download, no re-hash.
  CacheStats stats;
  EXPECT_EQ(AcquireAfterReboot(&stats), bytes_);
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.reverified, 0u);
  EXPECT_EQ(backend_->opens(kUri), 1);
}

TEST_F(ShardCacheDurabilityTest, FsyncedPublishHasNoBootTagAndSurvivesAReboot) {
  const ObjectMeta meta = Publish(/*fsync=*/true);
  EXPECT_TRUE(meta.unsynced_boot.empty());
  CacheStats stats;
  EXPECT_EQ(AcquireAfterReboot(&stats), bytes_);
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.reverified, 0u);
}

TEST_F(ShardCacheDurabilityTest, IntactObjectOfAnEarlierBootIsReverifiedOnceAndKept) {
  Publish(/*fsync=*/false);
  Reboot();
  CacheStats stats;
  EXPECT_EQ(AcquireAfterReboot(&stats), bytes_);
  EXPECT_EQ(stats.reverified, 1u);
  EXPECT_EQ(stats.downloads, 0u);
  EXPECT_EQ(backend_->opens(kUri), 1);  // the first download only
  // Read back from the disk and synced: no tag any more, so the next boot trusts it as it is.
  EXPECT_TRUE(ReadMeta(MetaPath()).value().unsynced_boot.empty());
  EXPECT_EQ(AcquireAfterReboot(&stats), bytes_);
  EXPECT_EQ(stats.reverified, 0u);
  EXPECT_EQ(stats.hits, 1u);
}

TEST_F(ShardCacheDurabilityTest, TornObjectOfAnEarlierBootIsNeverServed) {
  Publish(/*fsync=*/false);
  Reboot();
  Tear(4096, std::string(8192, '\0'));  // blocks whose write was lost read back as zeros
  CacheStats stats;
  EXPECT_EQ(AcquireAfterReboot(&stats), bytes_);
  EXPECT_EQ(stats.reverified, 0u);
  EXPECT_EQ(stats.downloads, 1u);
  EXPECT_EQ(backend_->opens(kUri), 2);
  const ObjectMeta meta = ReadMeta(MetaPath()).value();
  EXPECT_EQ(meta.unsynced_boot, BootId());  // downloaded again in this boot
}

TEST_F(ShardCacheDurabilityTest, LookAheadReverifiesAndRefetchesBeforeTheRead) {
  Publish(/*fsync=*/false);
  Reboot();
  Tear(bytes_.size() - 1, "#");  // one byte of the last block
  CacheStats stats;
  EXPECT_EQ(AcquireAfterReboot(&stats, /*threads=*/2), bytes_);
  EXPECT_EQ(stats.downloads, 1u);
  EXPECT_EQ(backend_->opens(kUri), 2);
}

TEST_F(ShardCacheDurabilityTest, MetaFromBeforeTheBootTagStillReads) {
  // Caches written before the tag existed were always fsynced: their meta has no unsynced_boot.
  const std::string path = dir_->Join("meta.json");
  ASSERT_TRUE(
      WriteFileAtomically(path, "{\"uri\":\"u\",\"size_bytes\":3,\"xxh3\":\"0011223344556677\"}\n")
          .ok());
  Result<ObjectMeta> meta = ReadMeta(path);
  ASSERT_TRUE(meta.ok()) << meta.status().ToString();
  EXPECT_TRUE(meta->unsynced_boot.empty());
  ASSERT_TRUE(WriteFileAtomically(path,
                                  "{\"uri\":\"u\",\"size_bytes\":3,\"xxh3\":\"0011223344556677\","
                                  "\"unsynced_boot\":7}\n")
                  .ok());
  EXPECT_FALSE(ReadMeta(path).ok());
}

}  // namespace
}  // namespace stoker::cache
