// The stream through the loader's engine: identical batches for any num_workers, exact resume
// with the shuffle buffer full, and bad input.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <random>

#include "stream/stream_planner.h"
#include "stream/stream_test_util.h"

namespace stoker::stream {
namespace {

using testing::TempDir;
using testing::WriteCorpus;

LoaderOptions Opts(int workers, PackMode pack) {
  LoaderOptions o;
  o.batch_size = 3;
  o.seq_len = 48;
  o.num_workers = workers;
  o.seed = 5;
  o.pack = pack;
  o.bestfit_window = 8;
  o.pin_memory = false;
  o.monitor_warnings = false;
  return o;
}

StreamOptions LoaderStreamOpts(std::vector<std::string> inputs) {
  StreamOptions s;
  s.inputs = std::move(inputs);
  s.shuffle_buffer = 40;  // far fewer than the documents: the buffer is full mid-stream
  return s;
}

// input_ids, labels, position_ids, segment_ids and cu_seqlens of a batch, as bytes.
std::string Bytes(const LoaderBatch& b) {
  std::string out;
  for (const TensorView& v : {b.input_ids(), b.labels(), b.position_ids(), b.segment_ids()}) {
    out.append(static_cast<const char*>(v.data), v.shape[0] * v.shape[1] * 8);
  }
  const TensorView cu = b.cu_seqlens();
  out.append(static_cast<const char*>(cu.data), cu.shape[0] * 4);
  return out;
}

std::vector<std::string> Take(Loader& l, int n, std::vector<PlanState>* states = nullptr) {
  std::vector<std::string> out;
  while (static_cast<int>(out.size()) < n) {
    Result<std::optional<LoaderBatch>> b = l.Next();
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    if (!b.ok()) break;
    if (!b->has_value()) continue;  // epoch end
    out.push_back(Bytes(**b));
    if (states) states->push_back((*b)->state_after());
  }
  return out;
}

class StreamLoaderPack : public ::testing::TestWithParam<PackMode> {};

TEST_P(StreamLoaderPack, SameBatchesForAnyNumWorkers) {
  TempDir dir;
  auto paths = WriteCorpus(dir, {200, 30, 150});
  std::vector<std::string> ref;
  for (int w : {1, 2, 8}) {
    auto l = OpenStreamLoader(LoaderStreamOpts(paths), Opts(w, GetParam()));
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    std::vector<std::string> got = Take(**l, 60);  // crosses epoch ends
    if (ref.empty()) {
      ref = got;
    } else {
      EXPECT_EQ(got, ref) << "num_workers " << w;
    }
  }
}

TEST_P(StreamLoaderPack, SameBatchesForAnyNumWorkersOnABiggerInput) {
  // Thousands of documents: many chunks in flight on the tokenizing pool at once, a buffer of
  // 1,000 and a pool of 1, 2 and 8 threads (num_workers): the same batches, bytewise.
  TempDir dir;
  auto paths = WriteCorpus(dir, {3000, 400, 0, 2500, 1100});
  StreamOptions so = LoaderStreamOpts(paths);
  so.shuffle_buffer = 1000;
  std::vector<std::string> ref;
  for (int w : {1, 2, 8}) {
    auto l = OpenStreamLoader(so, Opts(w, GetParam()));
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    std::vector<std::string> got = Take(**l, 400);
    ASSERT_EQ(got.size(), 400u);
    if (ref.empty()) ref = got;
    EXPECT_EQ(got, ref) << "num_workers " << w;
  }
}

TEST_P(StreamLoaderPack, ResumeAtRandomStepsEqualsTheUninterruptedStream) {
  TempDir dir;
  auto paths = WriteCorpus(dir, {200, 30, 150});
  auto l = OpenStreamLoader(LoaderStreamOpts(paths), Opts(2, GetParam())).value();
  std::vector<PlanState> states;
  std::vector<std::string> all = Take(*l, 70, &states);
  std::mt19937 rng(3);
  for (int trial = 0; trial < 4; ++trial) {
    const size_t k = rng() % 60;
    // Through JSON, as a checkpoint would travel.
    PlanState st = PlanState::FromJson(states[k].ToJson()).value();
    auto resumed = OpenStreamLoader(LoaderStreamOpts(paths), Opts(1 + trial, GetParam()), &st);
    ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
    std::vector<std::string> rest = Take(**resumed, 10);
    for (size_t i = 0; i < rest.size(); ++i) {
      EXPECT_EQ(rest[i], all[k + 1 + i]) << "resumed after batch " << k << ", batch " << i;
    }
    // Loader::Restore on an open loader does the same.
    ASSERT_TRUE(l->Restore(st).ok());
    EXPECT_EQ(Take(*l, 3)[0], all[k + 1]);
  }
}

TEST_P(StreamLoaderPack, ManyShortEpochsWithManyWorkers) {
  // Workers race into each next epoch: a later step of an epoch may be asked for first.
  TempDir dir;
  auto paths = WriteCorpus(dir, {20, 9, 14});
  std::vector<std::string> ref;
  for (int w : {1, 8}) {
    auto l = OpenStreamLoader(LoaderStreamOpts(paths), Opts(w, GetParam()));
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    std::vector<std::string> got = Take(**l, 120);
    ASSERT_EQ(got.size(), 120u);
    if (ref.empty()) ref = got;
    EXPECT_EQ(got, ref) << "num_workers " << w;
  }
}

INSTANTIATE_TEST_SUITE_P(Packs, StreamLoaderPack,
                         ::testing::Values(PackMode::kConcat, PackMode::kBestFit, PackMode::kPad));

TEST(StreamLoader, StateOfAnotherStreamIsRefused) {
  TempDir dir;
  auto paths = WriteCorpus(dir, {50, 50});
  auto l = OpenStreamLoader(LoaderStreamOpts(paths), Opts(1, PackMode::kConcat)).value();
  std::vector<PlanState> states;
  Take(*l, 3, &states);
  LoaderOptions other = Opts(1, PackMode::kConcat);
  other.seed = 6;
  auto r = OpenStreamLoader(LoaderStreamOpts(paths), other, &states[1]);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("fingerprint"), std::string::npos);
}

Status OpenAndRead(const std::vector<std::string>& paths, ErrorPolicy policy, uint64_t* skipped) {
  LoaderOptions o = Opts(2, PackMode::kConcat);
  o.on_error = policy;
  StreamOptions so = LoaderStreamOpts(paths);
  so.utf8 = Utf8Policy::kFail;
  auto l = OpenStreamLoader(so, o);
  if (!l.ok()) return l.status();
  for (int i = 0; i < 5; ++i) {
    Result<std::optional<LoaderBatch>> b = (*l)->Next();
    if (!b.ok()) return b.status();
  }
  *skipped = 0;
  return Status::OK();
}

TEST(StreamLoader, RecordWithoutTheTextFieldNamesFileAndOffset) {
  TempDir dir;
  auto paths = WriteCorpus(dir, {60});
  std::string bad = dir.Write("bad.jsonl", "{\"text\": \"fine line one\"}\n{\"body\": \"x\"}\n");
  paths.push_back(bad);
  uint64_t skipped = 0;
  Status s = OpenAndRead(paths, ErrorPolicy::kFail, &skipped);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("bad.jsonl"), std::string::npos) << s.ToString();
  // The file is cut into byte ranges (fewer files than shards wanted): offsets, not lines.
  EXPECT_NE(s.message().find("bad.jsonl (byte offset 26)"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("missing text field"), std::string::npos) << s.ToString();
  EXPECT_TRUE(OpenAndRead(paths, ErrorPolicy::kSkip, &skipped).ok());
}

TEST(StreamLoader, InvalidUtf8UnderFailNamesTheOffset) {
  TempDir dir;
  auto paths = WriteCorpus(dir, {60});
  paths.push_back(dir.Write("u.jsonl", "{\"text\": \"ok \xff here\"}\n"));
  // (u.jsonl's only line starts its file: the message also gives line 1.)
  uint64_t skipped = 0;
  Status s = OpenAndRead(paths, ErrorPolicy::kFail, &skipped);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("u.jsonl"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("invalid UTF-8 at byte offset 13"), std::string::npos) << s.ToString();
}

TEST(StreamLoader, TruncatedGzipFailsNamingTheFileOrIsSkipped) {
  TempDir dir;
  auto paths = WriteCorpus(dir, {60});
  std::string body;
  for (int i = 0; i < 200; ++i) body += "{\"text\": \"gz line " + std::to_string(i) + "\"}\n";
  uLongf cap = compressBound(body.size()) + 64;
  std::string z(cap, '\0');
  // A gzip stream through zlib's gz* API, then cut in half.
  const std::string gz = dir.File("t.jsonl.gz");
  gzFile f = gzopen(gz.c_str(), "wb");
  gzwrite(f, body.data(), body.size());
  gzclose(f);
  std::string whole;
  {
    std::ifstream in(gz, std::ios::binary);
    whole.assign(std::istreambuf_iterator<char>(in), {});
  }
  dir.Write("t.jsonl.gz", whole.substr(0, whole.size() / 2));
  paths.push_back(gz);
  uint64_t skipped = 0;
  Status s = OpenAndRead(paths, ErrorPolicy::kFail, &skipped);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("t.jsonl.gz"), std::string::npos) << s.ToString();
  EXPECT_TRUE(OpenAndRead(paths, ErrorPolicy::kSkip, &skipped).ok());
}

TEST(StreamLoader, EmptyShardsAreFineAndAnAllEmptyInputIsAnError) {
  TempDir dir;
  auto paths = WriteCorpus(dir, {60, 0});
  uint64_t skipped = 0;
  EXPECT_TRUE(OpenAndRead(paths, ErrorPolicy::kFail, &skipped).ok());
  Status s = OpenAndRead({dir.Write("empty.jsonl", "")}, ErrorPolicy::kFail, &skipped);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no full batch"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace stoker::stream
