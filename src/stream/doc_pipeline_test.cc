// DocPipeline: the same documents, positions, counts and errors for any pool size, and a Reset
// at a recorded position continues exactly there.
#include "stream/doc_pipeline.h"

#include <gtest/gtest.h>

#include "stream/stream_test_util.h"

namespace stoker::stream {
namespace {

using testing::TempDir;
using testing::WriteCorpus;

struct Seen {
  std::vector<DocRef> refs;
  std::vector<std::vector<int32_t>> tokens;
  std::vector<StreamPosition> after;
  Status end;
  PackCounters counters;
};

class Corpus {
 public:
  explicit Corpus(const std::vector<std::string>& paths, bool skip) {
    Result<std::vector<StreamShard>> s = MakeShards(paths, 1);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    shards_ = *s;
    for (uint32_t i = 0; i < shards_.size(); ++i) {
      dealt_.push_back({static_cast<uint32_t>(shards_.size() - 1 - i), 0, 0, 0});
    }
    tok_ = *OpenTokenizer("bytes");
    options_.encoder.skip_bad_lines = skip;
  }
  Seen Read(int threads, const StreamPosition& from = {}, size_t limit = SIZE_MAX,
            const std::vector<ReadUnit>* units = nullptr) const {
    std::unique_ptr<EncodePool> pool;
    if (threads > 0) pool = std::make_unique<EncodePool>(threads);
    DocPipeline p(&shards_, tok_.get(), options_, pool.get());
    p.Reset(&shards_, units ? units : &dealt_, from);
    Seen seen;
    PipelineDoc d;
    while (seen.refs.size() < limit) {
      Result<bool> got = p.Next(&d);
      if (!got.ok()) seen.end = got.status();
      if (!got.ok() || !*got) break;
      seen.refs.push_back(d.ref);
      seen.tokens.push_back(*d.tokens);
      seen.after.push_back(p.position());
    }
    seen.counters = p.counters();
    return seen;
  }

 private:
  std::vector<StreamShard> shards_;
  std::vector<ReadUnit> dealt_;
  std::unique_ptr<Tokenizer> tok_;
  ReaderOptions options_;
};

void ExpectSame(const Seen& a, const Seen& b, const std::string& what) {
  EXPECT_EQ(a.refs, b.refs) << what;
  EXPECT_EQ(a.tokens, b.tokens) << what;
  ASSERT_EQ(a.after.size(), b.after.size()) << what;
  for (size_t i = 0; i < a.after.size(); ++i) {
    EXPECT_EQ(a.after[i].shard_pos, b.after[i].shard_pos);
    EXPECT_EQ(a.after[i].next_record, b.after[i].next_record);
    EXPECT_EQ(a.after[i].next_offset, b.after[i].next_offset);
  }
  EXPECT_EQ(a.end.ToString(), b.end.ToString()) << what;
  EXPECT_EQ(a.counters.ToMap(), b.counters.ToMap()) << what;
}

// Bad lines (counted skips) and empty documents spread through a large corpus.
std::vector<std::string> MessyCorpus(const TempDir& dir) {
  std::vector<std::string> paths = WriteCorpus(dir, {1500, 7, 0, 900, 2100});
  std::string body;
  for (int i = 0; i < 800; ++i) {
    if (i % 97 == 5)
      body += "{not json\n";
    else if (i % 89 == 3)
      body += "{\"text\": \"\"}\n";
    else
      body += "{\"text\": \"" + testing::DocText(9, i) + "\"}\n";
  }
  paths.push_back(dir.Write("messy.jsonl", body));
  return paths;
}

TEST(DocPipeline, SameDocumentsForAnyPoolSize) {
  TempDir dir;
  Corpus corpus(MessyCorpus(dir), /*skip=*/true);
  const Seen ref = corpus.Read(0);
  ASSERT_TRUE(ref.end.ok()) << ref.end.ToString();
  EXPECT_GT(ref.refs.size(), 5000u);
  EXPECT_GT(ref.counters.bad_lines_skipped, 0u);
  EXPECT_GT(ref.counters.empty_documents_skipped, 0u);
  for (int threads : {1, 2, 8}) ExpectSame(corpus.Read(threads), ref, std::to_string(threads));
}

TEST(DocPipeline, AnEncodeErrorComesAtTheSameDocumentForAnyPoolSize) {
  TempDir dir;
  Corpus corpus(MessyCorpus(dir), /*skip=*/false);
  const Seen ref = corpus.Read(0);
  EXPECT_FALSE(ref.end.ok());
  EXPECT_NE(ref.end.message().find("messy.jsonl:6"), std::string::npos) << ref.end.ToString();
  for (int threads : {1, 3}) ExpectSame(corpus.Read(threads), ref, std::to_string(threads));
}

TEST(DocPipeline, ResetAtARecordedPositionContinuesThere) {
  TempDir dir;
  Corpus corpus(MessyCorpus(dir), /*skip=*/true);
  const Seen all = corpus.Read(2);
  for (size_t cut : {size_t{0}, size_t{1}, size_t{1499}, size_t{1500}, size_t{3000}}) {
    const Seen rest = corpus.Read(2, all.after[cut]);
    ASSERT_EQ(rest.refs.size(), all.refs.size() - cut - 1) << cut;
    EXPECT_TRUE(std::equal(rest.refs.begin(), rest.refs.end(), all.refs.begin() + cut + 1)) << cut;
  }
}

TEST(DocPipeline, AUnitStartingInsideAShardReadsItsTailAndCountsItsDocuments) {
  TempDir dir;
  Corpus corpus(MessyCorpus(dir), /*skip=*/true);
  const Seen all = corpus.Read(2);
  // position().docs counts the documents of the current shard handed out so far.
  for (size_t i = 0, in_shard = 0; i < all.refs.size(); ++i) {
    in_shard = i > 0 && all.refs[i].shard == all.refs[i - 1].shard ? in_shard + 1 : 1;
    ASSERT_EQ(all.after[i].docs, in_shard) << i;
  }
  for (size_t cut : {size_t{0}, size_t{700}, size_t{2000}}) {
    const StreamPosition& at = all.after[cut];
    const uint32_t shard = all.refs[cut].shard;
    const std::vector<ReadUnit> tail{{shard, at.next_record, at.next_offset, at.docs}};
    const Seen rest = corpus.Read(3, {}, SIZE_MAX, &tail);
    std::vector<DocRef> want;
    for (size_t i = cut + 1; i < all.refs.size() && all.refs[i].shard == shard; ++i) {
      want.push_back(all.refs[i]);
    }
    EXPECT_EQ(rest.refs, want) << cut;
    if (!rest.after.empty()) EXPECT_EQ(rest.after.back().docs, at.docs + want.size()) << cut;
  }
}

TEST(DocPipeline, StoppingEarlyWithChunksInFlightIsClean) {
  TempDir dir;
  Corpus corpus(MessyCorpus(dir), /*skip=*/true);
  EXPECT_EQ(corpus.Read(4, {}, 3).refs.size(), 3u);  // the destructor waits for its tasks
}

}  // namespace
}  // namespace stoker::stream
