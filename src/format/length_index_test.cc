#include "format/length_index.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/atomic_file_test_util.h"
#include "common/file_util.h"
#include "common/temp_dir.h"
#include "format/dataset_length_index.h"
#include "format/megatron_writer.h"
#include "format/stoker_dataset.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

class LengthIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::Create();
    ASSERT_TRUE(dir.ok());
    dir_ = std::move(*dir);
  }
  // A dataset whose shards hold the given lengths (tokens 1, 2, ...), with a length index.
  Manifest WriteDataset(const std::string& dir, const std::vector<std::vector<int>>& shards) {
    Manifest m;
    m.tokenizer = {"bytes", "bytes", 256, 0, ""};
    m.dtype = TokenDType::kUint16;
    for (size_t s = 0; s < shards.size(); ++s) {
      auto w = MegatronWriter::Create(JoinPath(dir, "shard-" + std::to_string(s)), m.dtype);
      EXPECT_TRUE(w.ok());
      for (int len : shards[s]) EXPECT_TRUE((*w)->AddDocument(std::vector<int32_t>(len, 7)).ok());
      auto info = (*w)->Finish();
      EXPECT_TRUE(info.ok());
      m.shards.push_back(*info);
    }
    auto index = BuildDatasetLengthIndex(dir, m);
    EXPECT_TRUE(index.ok()) << index.status().ToString();
    m.length_index = *index;
    EXPECT_TRUE(WriteManifest(dir, m).ok());
    return m;
  }
  std::string Path(const std::string& name) const { return dir_->Join(name); }
  std::unique_ptr<TempDir> dir_;
};

void FlipByte(const std::string& path, uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c;
  f.read(&c, 1);
  c ^= 0x40;
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

TEST_F(LengthIndexTest, RoundTripsLengthsShardsAndTotals) {
  const std::vector<uint64_t> lengths{5, 0, 3, 4000000000ULL, 1};
  auto h = WriteLengthIndex(Path("a.stkidx"), {0, 2, 2, 5}, lengths);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  auto index = LengthIndex::Open(Path("a.stkidx"));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  const LengthIndexHeader& got = (*index)->header();
  EXPECT_EQ(got.num_documents, 5u);
  EXPECT_EQ(got.num_shards, 3u);
  EXPECT_EQ(got.total_tokens, 4000000009ULL);
  EXPECT_EQ(got.nonempty_documents, 4u);
  EXPECT_EQ(got.max_length, 4000000000ULL);
  EXPECT_EQ(got.version, 2u);
  EXPECT_EQ(got.chunks_offset, 128u + 8 * 4 + 4 * 5);
  EXPECT_EQ(got.file_bytes, 128u + 8 * 4 + 4 * 5 + 8);  // one chunk checksum
  FingerprintHasher hash;
  for (uint64_t l : lengths) hash.Add(l);
  EXPECT_EQ(got.length_hash, hash.value());
  for (size_t d = 0; d < lengths.size(); ++d) EXPECT_EQ((*index)->lengths()[d], lengths[d]);
  EXPECT_EQ((*index)->shard_first_document(1), 2u);
  EXPECT_EQ((*index)->shard_first_document(3), 5u);
  EXPECT_TRUE((*index)->Verify().ok());
  // The header alone locates the arrays (a reader of a byte range needs nothing else).
  auto text = ReadFileToString(Path("a.stkidx"));
  ASSERT_TRUE(text.ok());
  auto parsed =
      ParseLengthIndexHeader(reinterpret_cast<const uint8_t*>(text->data()), 128, "remote");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->lengths_offset, 160u);
  EXPECT_FALSE(WriteLengthIndex(Path("b.stkidx"), {0, 1}, {uint64_t{1} << 32}).ok());
  EXPECT_FALSE(PathExists(Path("b.stkidx")));
  EXPECT_TRUE(testing_util::AtomicTempFilesOf(Path("b.stkidx")).empty());
}

TEST_F(LengthIndexTest, DamageIsAnErrorNamingTheFile) {
  ASSERT_TRUE(WriteLengthIndex(Path("a.stkidx"), {0, 3}, {5, 6, 7}).ok());
  FlipByte(Path("a.stkidx"), 128 + 16 + 4);  // a length
  auto index = LengthIndex::Open(Path("a.stkidx"));
  ASSERT_TRUE(index.ok()) << "O(1) checks at open do not read the arrays";
  Status st = (*index)->Verify();
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_THAT(st.message(), HasSubstr(Path("a.stkidx")));
  EXPECT_THAT(st.message(), HasSubstr("checksum mismatch"));

  ASSERT_TRUE(WriteLengthIndex(Path("b.stkidx"), {0, 3}, {5, 6, 7}).ok());
  FlipByte(Path("b.stkidx"), 32);  // the token total
  auto b = LengthIndex::Open(Path("b.stkidx"));
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(), HasSubstr(Path("b.stkidx")));
  EXPECT_THAT(b.status().message(), HasSubstr("header checksum"));

  ASSERT_TRUE(WriteLengthIndex(Path("c.stkidx"), {0, 3}, {5, 6, 7}).ok());
  std::filesystem::resize_file(Path("c.stkidx"), 128 + 16 + 8);
  auto c = LengthIndex::Open(Path("c.stkidx"));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("truncated"));
}

TEST_F(LengthIndexTest, AWriterKilledBeforeFinishLeavesNoIndex) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto w = LengthIndexWriter::Create(Path("k.stkidx"), {0, 1000000});
    std::vector<uint64_t> lengths(500000, 3);
    if (w.ok() && (*w)->Add(lengths.data(), lengths.size()).ok()) _exit(0);  // no Finish
    _exit(1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  // Only the temporary file exists; nothing reads it under the index's name.
  EXPECT_EQ(testing_util::AtomicTempFilesOf(Path("k.stkidx")).size(), 1u);
  EXPECT_EQ(LengthIndex::Open(Path("k.stkidx")).status().code(), StatusCode::kNotFound);
}

TEST_F(LengthIndexTest, ADatasetOpensWithItsIndexAndItsLengths) {
  WriteDataset(dir_->path(), {{3, 1}, {}, {4, 0, 2}});
  auto ds = StokerDataset::Open(dir_->path());
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ASSERT_NE((*ds)->length_index(), nullptr);
  const LengthIndex& index = *(*ds)->length_index();
  EXPECT_TRUE(index.Verify().ok());
  const std::vector<uint32_t> want{3, 1, 4, 0, 2};
  for (size_t d = 0; d < want.size(); ++d) {
    EXPECT_EQ(index.lengths()[d], want[d]);
    EXPECT_EQ((*ds)->document_length(d), want[d]);
  }
  for (uint64_t s = 0; s <= 3; ++s) {
    EXPECT_EQ(index.shard_first_document(s), (*ds)->shard_first_document(s));
  }
  EXPECT_EQ(index.header().total_tokens, (*ds)->num_tokens());
}

TEST_F(LengthIndexTest, AStaleOrForeignIndexIsAnErrorNamingTheFile) {
  const std::string a = dir_->Join("a"), b = dir_->Join("b");
  ASSERT_TRUE(MakeDirectories(a).ok() && MakeDirectories(b).ok());
  Manifest ma = WriteDataset(a, {{3, 1}, {4}});
  WriteDataset(b, {{3, 1, 5}, {4}});
  const std::string index_a = JoinPath(a, std::string(kLengthIndexFileName));
  auto expect_refused = [&](const std::string& needle) {
    auto ds = StokerDataset::Open(a);
    ASSERT_FALSE(ds.ok());
    EXPECT_EQ(ds.status().code(), StatusCode::kCorruption);
    EXPECT_THAT(ds.status().message(), HasSubstr(index_a));
    EXPECT_THAT(ds.status().message(), HasSubstr(needle));
    EXPECT_THAT(ds.status().message(), HasSubstr("stoker index"));
  };
  // Another dataset's index under this one's name: the manifest's checksum disagrees.
  std::filesystem::copy_file(JoinPath(b, std::string(kLengthIndexFileName)), index_a,
                             std::filesystem::copy_options::overwrite_existing);
  expect_refused("checksum");
  // An index whose counts disagree with the shards, though the manifest names it.
  auto h = WriteLengthIndex(index_a, {0, 1, 2}, {3, 4});
  ASSERT_TRUE(h.ok());
  ma.length_index->bytes = h->file_bytes;
  ma.length_index->xxh3 = Xxh3Hex(h->arrays_xxh3);
  ASSERT_TRUE(WriteManifest(a, ma).ok());
  expect_refused("but the shards hold 3 documents");
  // A damaged length: the dataset opens (O(shards)), the chunk's checksum catches it when the
  // length is first read, and the dataset's own lengths then come from the shards.
  auto rebuilt_a = BuildDatasetLengthIndex(a, ma);
  ASSERT_TRUE(rebuilt_a.ok());
  ma.length_index = *rebuilt_a;
  ASSERT_TRUE(WriteManifest(a, ma).ok());
  ASSERT_TRUE(StokerDataset::Open(a).ok());
  FlipByte(index_a, 128 + 8 * 3 + 4 * 2);  // document 2's length
  auto damaged = StokerDataset::Open(a);
  ASSERT_TRUE(damaged.ok()) << damaged.status().ToString();
  const ChunkVerifier* chunks = (*damaged)->length_index()->chunk_verifier();
  ASSERT_NE(chunks, nullptr);
  EXPECT_TRUE(chunks->status().ok()) << "nothing read yet";
  std::vector<uint64_t> lengths(3);
  (*damaged)->DocumentLengths(0, 3, lengths.data());
  EXPECT_EQ(lengths, (std::vector<uint64_t>{3, 1, 4}));
  EXPECT_EQ(chunks->status().code(), StatusCode::kCorruption);
  EXPECT_THAT(chunks->status().message(), HasSubstr(index_a));
  EXPECT_THAT(chunks->status().message(), HasSubstr("length chunk 0 (documents 0 to 2)"));
  EXPECT_THAT(chunks->status().message(), HasSubstr("stoker index"));
  // `stoker index` (the same builder) repairs it.
  auto rebuilt = BuildDatasetLengthIndex(a, ma);
  ASSERT_TRUE(rebuilt.ok());
  ma.length_index = *rebuilt;
  ASSERT_TRUE(WriteManifest(a, ma).ok());
  EXPECT_TRUE(StokerDataset::Open(a).ok());
}

// The layout the previous code wrote (version 1: no chunk table), made from a version-2 file.
void RewriteAsVersionOne(const std::string& path) {
  auto text = ReadFileToString(path);
  ASSERT_TRUE(text.ok());
  auto h =
      ParseLengthIndexHeader(reinterpret_cast<const uint8_t*>(text->data()), text->size(), path);
  ASSERT_TRUE(h.ok());
  std::string out = text->substr(0, h->chunks_offset);
  auto put = [&](uint64_t at, uint64_t v) { std::memcpy(out.data() + at, &v, 8); };
  const uint32_t version = 1;
  std::memcpy(out.data() + 8, &version, 4);
  put(80, h->chunks_offset);  // file bytes
  put(88, Xxh3(out.data() + 128, out.size() - 128));
  for (uint64_t at = 96; at < 120; at += 8) put(at, 0);
  put(120, Xxh3(out.data(), 120));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << out;
}

TEST_F(LengthIndexTest, ADamagedChunkIsAnErrorWhenFirstReadNamingTheFileAndChunk) {
  std::vector<uint64_t> lengths(5000);
  for (size_t d = 0; d < lengths.size(); ++d) lengths[d] = d % 97;
  ASSERT_TRUE(WriteLengthIndex(Path("a.stkidx"), {0, 5000}, lengths).ok());
  const uint64_t lengths_at = 128 + 16;
  FlipByte(Path("a.stkidx"), lengths_at + 4 * 3500);  // in chunk 3: documents 3072 to 4095
  auto index = LengthIndex::Open(Path("a.stkidx"));
  ASSERT_TRUE(index.ok()) << "opening reads no lengths";
  const ChunkVerifier& chunks = *(*index)->chunk_verifier();
  EXPECT_EQ(chunks.num_chunks(), 5u);
  EXPECT_EQ(chunks.chunks_verified(), 0u);
  for (uint64_t d : {0, 1023, 1024, 3071, 4096, 4999}) chunks.Touch(d);
  EXPECT_EQ(chunks.chunks_verified(), 4u);
  EXPECT_TRUE(chunks.status().ok()) << "chunks 0, 1, 2 and 4 are sound";
  chunks.Touch(3072);
  Status st = chunks.status();
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_THAT(st.message(), HasSubstr(Path("a.stkidx")));
  EXPECT_THAT(st.message(), HasSubstr("length chunk 3 (documents 3072 to 4095)"));
  EXPECT_EQ((*index)->Verify().code(), StatusCode::kCorruption);
  EXPECT_EQ(chunks.VerifyAll().code(), StatusCode::kCorruption);

  // A damaged checksum in the chunk table is the same error for its chunk, never a pass.
  ASSERT_TRUE(WriteLengthIndex(Path("b.stkidx"), {0, 5000}, lengths).ok());
  FlipByte(Path("b.stkidx"), lengths_at + 4 * 5000 + 8 * 4 + 1);
  auto b = LengthIndex::Open(Path("b.stkidx"));
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE((*b)->chunk_verifier()->VerifyAll().message().find("length chunk 4") !=
              std::string::npos);
  // The shard array is checked at open (O(shards)).
  ASSERT_TRUE(WriteLengthIndex(Path("c.stkidx"), {0, 10, 5000}, lengths).ok());
  FlipByte(Path("c.stkidx"), 128 + 8);
  EXPECT_THAT(LengthIndex::Open(Path("c.stkidx")).status().message(),
              HasSubstr("shard array checksum"));
}

TEST_F(LengthIndexTest, AVersionOneIndexIsStillReadAndHashedWholeAtOpen) {
  Manifest m = WriteDataset(dir_->path(), {{3, 1}, {4, 0, 2}});
  const std::string path = dir_->Join(std::string(kLengthIndexFileName));
  RewriteAsVersionOne(path);
  auto h = ParseLengthIndexHeader(reinterpret_cast<const uint8_t*>(ReadFileToString(path)->data()),
                                  128, path);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  m.length_index->bytes = h->file_bytes;
  m.length_index->xxh3 = Xxh3Hex(h->arrays_xxh3);
  ASSERT_TRUE(WriteManifest(dir_->path(), m).ok());
  auto ds = StokerDataset::Open(dir_->path());
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  const LengthIndex& index = *(*ds)->length_index();
  EXPECT_EQ(index.header().version, 1u);
  EXPECT_EQ(index.chunk_verifier(), nullptr);
  EXPECT_TRUE(index.Verify().ok());
  for (uint64_t d = 0; d < 5; ++d) EXPECT_EQ(index.lengths()[d], (*ds)->document_length(d));
  // Without chunk checksums a damaged length is caught by the whole-file hash at open.
  FlipByte(path, 128 + 8 * 3 + 4);
  auto damaged = StokerDataset::Open(dir_->path());
  ASSERT_FALSE(damaged.ok());
  EXPECT_THAT(damaged.status().message(), HasSubstr("checksum mismatch"));
  EXPECT_THAT(damaged.status().message(), HasSubstr("stoker index"));
  // `stoker index` (the same builder) rewrites it as version 2.
  auto rebuilt = BuildDatasetLengthIndex(dir_->path(), m);
  ASSERT_TRUE(rebuilt.ok());
  m.length_index = *rebuilt;
  ASSERT_TRUE(WriteManifest(dir_->path(), m).ok());
  auto again = StokerDataset::Open(dir_->path());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->length_index()->header().version, 2u);
}

}  // namespace
}  // namespace stoker
