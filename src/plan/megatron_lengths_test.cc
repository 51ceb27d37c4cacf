// A Megatron input this machine has never seen: planned with no pass over its sizes before the
// first batch, with the fingerprints (so every checkpoint) of the code before, and with the token
// total taken from the pointers only where the .idx and the .bin agree (docs/plan.md, "Scale").
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "common/temp_dir.h"
#include "format/length_hash.h"
#include "format/test_files.h"
#include "plan/megatron_totals.h"
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
// (else the sizes' end); STOKER_CACHE_DIR is a fresh directory: nothing is cached yet.
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
  f.cache = f.dir->Join("cache");
  EXPECT_EQ(setenv("STOKER_CACHE_DIR", f.cache.c_str(), 1), 0);
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
  STOKER_ASSIGN_OR_RETURN(DatasetLengths lengths, DatasetLengths::FromTokenSource(*source));
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
// a checkpoint written then must restore now.
struct Golden {
  PackMode pack;
  int datasets;
  const char* fingerprint;
};
constexpr Golden kGolden[] = {
    {PackMode::kConcat, 1, "ff8a92bb70f4bebe"},
    {PackMode::kBestFit, 1, "1833b4d985b4acb9"},
    {PackMode::kPad, 1, "5d2997fbd365dfaa"},
    {PackMode::kBestFit, 3, "fb80383d2d3c6ca6"},
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
      before.fingerprint = g.fingerprint;
      auto state = PlanState::FromJson(before.ToJson());
      ASSERT_TRUE(state.ok());
      auto pos = mapped->Restore(*state);
      ASSERT_TRUE(pos.ok()) << what << ": " << pos.status().ToString();
      auto a = mapped->GetBatchAt(*pos, 1), b = memory->GetBatch(0, 5, 1);
      ASSERT_TRUE(a.ok() && b.ok()) << what;
      EXPECT_TRUE(a->rows == b->rows) << what;
    }
  }
}

}  // namespace
}  // namespace stoker::plan
