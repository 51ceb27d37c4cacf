// A Megatron input this machine has never seen: planned with no pass over its sizes before the
// first batch, with the fingerprints (so every checkpoint) of the code before, and with the token
// total taken from the pointers only where the .idx and the .bin agree (docs/plan.md, "Scale").
#include "format/megatron_lengths.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "common/hash.h"
#include "common/temp_dir.h"
#include "format/length_hash.h"
#include "format/test_files.h"
#include "plan/plan_test_util.h"
#include "stoker/plan.h"
#include "stoker/token_source.h"

namespace stoker::plan {
namespace {

using testing::MakePlan;

// Lengths from a formula (no library distribution), so the goldens below hold on any platform.
std::vector<int32_t> Sizes(uint64_t n) {
  std::vector<int32_t> s(n);
  for (uint64_t d = 0; d < n; ++d) {
    s[d] = d % 37 == 5 ? 0 : 1 + static_cast<int32_t>(Mix64(d) % 900);
  }
  return s;
}

uint64_t Sum(const std::vector<int32_t>& sizes) {
  uint64_t t = 0;
  for (int32_t s : sizes) t += static_cast<uint64_t>(s);
  return t;
}

// A uint16 .idx of `sizes` (pointers as given, else end to end) and a sparse .bin of `bin_bytes`
// (else the sizes' end); STOKER_CACHE_DIR is a fresh root: nothing is cached yet.
struct Files {
  std::unique_ptr<TempDir> dir;
  std::string prefix;
  std::string cache;
};
Files Write(const std::vector<int32_t>& sizes, std::vector<int64_t> pointers = {},
            int64_t bin_bytes = -1) {
  Files f;
  f.dir = std::move(TempDir::Create()).value();
  f.prefix = f.dir->Join("m");
  EXPECT_EQ(setenv("STOKER_CACHE_DIR", f.dir->Join("cache").c_str(), 1), 0);
  f.cache = f.dir->Join("cache/plan");  // the cache root's plan/
  std::string idx;
  if (pointers.empty()) {
    idx = stoker::testing::IdxBytesFor(8, 2, sizes);
  } else {
    std::vector<int64_t> docs;
    for (size_t i = 0; i <= sizes.size(); ++i) docs.push_back(static_cast<int64_t>(i));
    idx = stoker::testing::IdxBytes(8, sizes, pointers, docs);
  }
  EXPECT_TRUE(WriteFileAtomically(f.prefix + ".idx", idx).ok());
  EXPECT_TRUE(WriteFileAtomically(f.prefix + ".bin", "").ok());
  std::filesystem::resize_file(f.prefix + ".bin",
                               bin_bytes >= 0 ? bin_bytes : 2 * static_cast<int64_t>(Sum(sizes)));
  return f;
}

Result<std::shared_ptr<const DatasetLengths>> Open(const std::string& prefix) {
  STOKER_ASSIGN_OR_RETURN(auto source, OpenTokenSource(prefix));
  STOKER_ASSIGN_OR_RETURN(DatasetLengths lengths, source->Lengths());
  return std::make_shared<const DatasetLengths>(std::move(lengths));
}

std::shared_ptr<const DatasetLengths> InMemory(const std::vector<int32_t>& sizes) {
  auto out = std::make_shared<DatasetLengths>();
  out->name = "memory";
  out->document_lengths.assign(sizes.begin(), sizes.end());
  return out;
}

PlanOptions Options(PackMode pack) {
  PlanOptions o;
  o.seq_len = 512;
  o.batch_size = 2;
  o.world_size = 4;
  o.rank = 1;
  o.seed = 3;
  o.pack = pack;
  o.bestfit_window = 200;
  return o;
}

// Fingerprints of these plans as the code before lazy totals computed them (its one pass at open):
// a checkpoint written then must restore now. Three datasets interleave by the mixture tree since
// schedules came (docs/plan.md, "Mixtures"): that fingerprint changed on purpose, and a checkpoint
// written before is refused saying why (and taken with force).
struct Golden {
  PackMode pack;
  int datasets;
  const char* fingerprint;
  const char* before;  // the fingerprint a checkpoint of the code before carries
};
constexpr Golden kGolden[] = {
    {PackMode::kConcat, 1, "ff8a92bb70f4bebe", "ff8a92bb70f4bebe"},
    {PackMode::kBestFit, 1, "1833b4d985b4acb9", "1833b4d985b4acb9"},
    {PackMode::kPad, 1, "5d2997fbd365dfaa", "5d2997fbd365dfaa"},
    {PackMode::kBestFit, 3, "0a16c29e0701ce19", "fb80383d2d3c6ca6"},
};

std::vector<PlanDataset> Datasets(std::shared_ptr<const DatasetLengths> l, int n) {
  std::vector<PlanDataset> out;
  for (int k = 0; k < n; ++k) out.push_back({l, static_cast<double>(n - k)});
  return out;
}

TEST(MegatronLengthsTest, FingerprintsAndCheckpointsAreThoseOfTheCodeBefore) {
  const std::vector<int32_t> sizes = Sizes(50'000);
  Files f = Write(sizes);
  for (int run = 0; run < 2; ++run) {  // uncached, then from the cache
    auto lengths = Open(f.prefix);
    ASSERT_TRUE(lengths.ok()) << lengths.status().ToString();
    for (const Golden& g : kGolden) {
      auto mapped = MakePlan(Datasets(*lengths, g.datasets), Options(g.pack));
      auto memory = MakePlan(Datasets(InMemory(sizes), g.datasets), Options(g.pack));
      ASSERT_TRUE(mapped && memory);
      const std::string what = std::string(PackModeName(g.pack)) + " x" +
                               std::to_string(g.datasets) + " run " + std::to_string(run);
      EXPECT_EQ(mapped->fingerprint(), g.fingerprint) << what;
      EXPECT_EQ(memory->fingerprint(), g.fingerprint) << what;
      EXPECT_EQ(mapped->steps_per_epoch(0), memory->steps_per_epoch(0)) << what;
      // A checkpoint written by the code before, at step 5: resumes here at the same batch.
      PlanState before;
      before.position = {0, 5 * mapped->global_batch_rows()};
      before.fingerprint = g.before;
      auto state = PlanState::FromJson(before.ToJson());
      ASSERT_TRUE(state.ok());
      const bool changed = std::string(g.before) != g.fingerprint;
      auto pos = mapped->Restore(*state);
      if (changed) {
        ASSERT_FALSE(pos.ok()) << what;
        EXPECT_NE(pos.status().message().find("three or more datasets"), std::string::npos)
            << what << ": " << pos.status().ToString();
        pos = mapped->Restore(*state, /*force=*/true);
      }
      ASSERT_TRUE(pos.ok()) << what << ": " << pos.status().ToString();
      auto a = mapped->GetBatchAt(*pos, 1), b = memory->GetBatch(0, 5, 1);
      ASSERT_TRUE(a.ok() && b.ok()) << what;
      EXPECT_TRUE(a->rows == b->rows) << what;
    }
  }
}

// The first open of a .idx never seen: no pass over its sizes before the first batches (concat,
// bestfit, a 3-way mixture), only the chunks those batches read are checked; pad counts its rows
// (one parallel pass); the fingerprint makes the one hash pass, which the next open reads cached.
TEST(MegatronLengthsTest, AFirstOpenMakesNoPassBeforeTheFirstBatch) {
  const std::vector<int32_t> sizes = Sizes(400'000);
  Files f = Write(sizes);
  struct Case {
    PackMode pack;
    int datasets;
    uint64_t passes;  // before the fingerprint is asked for
  };
  for (const Case& c : {Case{PackMode::kConcat, 1, 0}, Case{PackMode::kBestFit, 1, 0},
                        Case{PackMode::kBestFit, 3, 0}, Case{PackMode::kPad, 1, 1}}) {
    std::filesystem::remove_all(f.cache);  // never seen
    const std::string what = std::string(PackModeName(c.pack)) + " x" + std::to_string(c.datasets);
    const uint64_t before = MegatronLengthPasses();
    auto lengths = Open(f.prefix);
    ASSERT_TRUE(lengths.ok()) << lengths.status().ToString();
    EXPECT_EQ((*lengths)->totals->tokens, Sum(sizes)) << what;
    auto plan = MakePlan(Datasets(*lengths, c.datasets), Options(c.pack));
    ASSERT_TRUE(plan) << what;
    for (uint64_t step = 0; step < 3; ++step) {
      auto batch = plan->GetBatch(0, step, 1);
      ASSERT_TRUE(batch.ok()) << what << ": " << batch.status().ToString();
    }
    EXPECT_EQ(MegatronLengthPasses() - before, c.passes) << what;
    // In source order the first batches read the first windows only: any pass over the lengths
    // through the plan (a sum, a hash) would check every chunk.
    PlanOptions in_order = Options(c.pack);
    in_order.shuffle = ShuffleMode::kNone;
    auto fresh = Open(f.prefix);
    ASSERT_TRUE(fresh.ok());
    auto ordered = MakePlan(Datasets(*fresh, c.datasets), in_order);
    ASSERT_TRUE(ordered && ordered->GetBatch(0, 2, 1).ok()) << what;
    EXPECT_LE((*fresh)->mapped.verifier->chunks_verified(), 16u) << what;
    auto memory = MakePlan(Datasets(InMemory(sizes), c.datasets), Options(c.pack));
    ASSERT_TRUE(memory);
    EXPECT_EQ(plan->fingerprint(), memory->fingerprint()) << what;
    EXPECT_EQ(MegatronLengthPasses() - before, c.passes + 1) << what << ": one hash pass";
    // Another process's open: everything from the cache.
    auto again = Open(f.prefix);
    ASSERT_TRUE(again.ok());
    auto cached = MakePlan(Datasets(*again, c.datasets), Options(c.pack));
    ASSERT_TRUE(cached);
    EXPECT_EQ(cached->fingerprint(), memory->fingerprint()) << what;
    EXPECT_EQ(cached->steps_per_epoch(0), memory->steps_per_epoch(0)) << what;
    auto a = cached->GetBatch(0, 2, 1), b = memory->GetBatch(0, 2, 1);
    ASSERT_TRUE(a.ok() && b.ok()) << what;
    EXPECT_TRUE(a->rows == b->rows) << what;
    EXPECT_EQ(MegatronLengthPasses() - before, c.passes + 1) << what << ": nothing recounted";
  }
}

// The token total comes from the .bin's size: a .bin that does not end where the last sequence
// ends (or a first sequence not at byte 0) is an error at open naming both files (a .bin too
// short already fails the source's own O(1) checks).
TEST(MegatronLengthsTest, ABinWhoseSizeDisagreesWithThePointersIsAnErrorNamingTheFiles) {
  const std::vector<int32_t> sizes = Sizes(5'000);
  const int64_t bytes = 2 * static_cast<int64_t>(Sum(sizes));
  for (int64_t bin : {bytes + 2, bytes - 2}) {
    Files f = Write(sizes, {}, bin);
    auto lengths = Open(f.prefix);
    ASSERT_FALSE(lengths.ok()) << bin;
    EXPECT_EQ(lengths.status().code(), StatusCode::kCorruption);
    const std::string& m = lengths.status().message();
    EXPECT_NE(m.find(f.prefix + ".idx"), std::string::npos) << m;
    EXPECT_NE(m.find(f.prefix + ".bin"), std::string::npos) << m;
    EXPECT_NE(m.find(std::to_string(bin) + " bytes"), std::string::npos) << m;
  }
}

// Sequences with a gap between two of them (the ends still agree): the sum of the lengths is not
// the .bin's size, so the chunk holding the gap is an error naming the .idx and the sequence when
// the plan reads it, and no batch from then on is given out: never a plan from a wrong total.
TEST(MegatronLengthsTest, ASequenceNotWhereThePreviousEndsIsAnErrorWhenRead) {
  const std::vector<int32_t> sizes = Sizes(20'000);
  std::vector<int64_t> pointers;
  int64_t p = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (d == 15'000) p += 2;  // one token of garbage before sequence 15,000
    pointers.push_back(p);
    p += 2 * sizes[d];
  }
  Files f = Write(sizes, pointers, p);
  auto lengths = Open(f.prefix);
  ASSERT_TRUE(lengths.ok()) << lengths.status().ToString();
  PlanOptions o = Options(PackMode::kConcat);
  o.shuffle = ShuffleMode::kNone;  // the first batches read only the first chunk
  auto plan = MakePlan(Datasets(*lengths, 1), o);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->GetBatch(0, 0, 1).ok());
  std::vector<Row> rows;
  Status all = plan->GetRows(0, 0, plan->rows_in_epoch(0), &rows);
  EXPECT_EQ(all.code(), StatusCode::kCorruption);
  EXPECT_NE(all.message().find(f.prefix + ".idx"), std::string::npos) << all.message();
  EXPECT_NE(all.message().find("sequences 14336 to 15359 hold"), std::string::npos)
      << all.message();
  EXPECT_EQ(plan->GetBatch(0, 0, 1).status().code(), StatusCode::kCorruption);
}

// What a process killed before its rename leaves (a temporary file with forged totals) is never
// read; a sound cache file under the final name is.
TEST(MegatronLengthsTest, TotalsLeftByAKilledWriterAreNeverUsed) {
  const std::vector<int32_t> sizes = Sizes(20'000);
  Files f = Write(sizes);
  auto memory = MakePlan(Datasets(InMemory(sizes), 1), Options(PackMode::kConcat));
  ASSERT_TRUE(memory);
  {
    auto lengths = Open(f.prefix);
    ASSERT_TRUE(lengths.ok());
    auto plan = MakePlan(Datasets(*lengths, 1), Options(PackMode::kConcat));
    ASSERT_EQ(plan->fingerprint(), memory->fingerprint());  // writes the cache
  }
  std::string totals;
  for (const auto& e : std::filesystem::directory_iterator(f.cache)) {
    if (e.path().extension() == ".totals") totals = e.path();
  }
  ASSERT_FALSE(totals.empty());
  auto bytes = ReadFileToString(totals);
  ASSERT_TRUE(bytes.ok());
  std::string forged = bytes->substr(0, bytes->size() - 8);
  forged[forged.size() - 1] ^= 0x5a;  // another hash, with a checksum that matches it
  const uint64_t sum = Xxh3(forged.data(), forged.size());
  forged.append(reinterpret_cast<const char*>(&sum), 8);
  std::filesystem::remove(totals);
  ASSERT_TRUE(WriteFileAtomically(totals + ".tmp.4242.7", forged).ok());
  auto lengths = Open(f.prefix);
  ASSERT_TRUE(lengths.ok());
  EXPECT_FALSE((*lengths)->totals->length_hash.has_value()) << "no cache under the final name";
  auto plan = MakePlan(Datasets(*lengths, 1), Options(PackMode::kConcat));
  EXPECT_EQ(plan->fingerprint(), memory->fingerprint());
  // The forged file under the final name (its checksum is sound): read, so the rename is the gate.
  ASSERT_TRUE(WriteFileAtomically(totals, forged).ok());
  auto forged_open = Open(f.prefix);
  ASSERT_TRUE(forged_open.ok());
  EXPECT_TRUE((*forged_open)->totals->length_hash.has_value());
}

}  // namespace
}  // namespace stoker::plan
