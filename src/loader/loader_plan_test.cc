// The loader over a real stoker::Plan: opened by path and by TokenSource, checked against the plan.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "format/test_files.h"
#include "loader/loader_test_util.h"
#include "plan/megatron_totals.h"
#include "stoker/loader.h"

namespace stoker::loader {
namespace {

using testing::BatchDump;
using testing::Dump;

constexpr int64_t kPlanIgnore = -100;

LoaderOptions PlanTestOptions(int workers) {
  LoaderOptions o;
  o.batch_size = 3;
  o.seq_len = 50;
  o.num_workers = workers;
  o.shuffle = ShuffleMode::kGlobal;
  o.pack = PackMode::kConcat;
  o.seed = 11;
  return o;
}

std::unique_ptr<Loader> OpenOrDie(std::vector<LoaderDataset> d, const LoaderOptions& o,
                                  const PlanState* resume = nullptr) {
  auto r = Loader::Open(std::move(d), o, resume);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : nullptr;
}

TEST(LoaderPlanTest, EveryRowHoldsExactlyThePlansTokens) {
  auto src = testing::RandomSource(5, 200, 90);
  for (PackMode pack : {PackMode::kConcat, PackMode::kBestFit}) {
    LoaderOptions o = PlanTestOptions(3);
    o.pack = pack;
    o.world_size = 2;
    o.rank = 1;
    auto loader = OpenOrDie({{"", src}}, o);
    ASSERT_NE(loader, nullptr);
    const Plan& plan = *loader->plan();
    uint64_t step = 0;
    while (true) {
      auto r = loader->Next();
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      if (!r->has_value()) break;
      auto want = plan.GetBatch(0, step, 1);
      ASSERT_TRUE(want.ok());
      BatchDump got = Dump(**r);
      EXPECT_EQ(got.step, step);
      for (size_t row = 0; row < o.batch_size; ++row) {
        std::vector<int64_t> ids, labels, seg;
        int64_t s = 0;
        for (const stoker::RowPiece& p : want->rows[row].pieces) {
          const auto& doc = src->document(p.document);
          ++s;
          for (uint64_t i = 0; i < p.length; ++i) {
            ids.push_back(doc[p.offset + i]);
            labels.push_back(p.offset + i + 1 < doc.size() ? doc[p.offset + i + 1] : kPlanIgnore);
            seg.push_back(s);
          }
        }
        ids.resize(o.seq_len, 0);
        labels.resize(o.seq_len, kPlanIgnore);
        seg.resize(o.seq_len, 0);
        auto slice = [&](const std::vector<int64_t>& v) {
          return std::vector<int64_t>(v.begin() + row * o.seq_len,
                                      v.begin() + (row + 1) * o.seq_len);
        };
        EXPECT_EQ(slice(got.ids), ids) << "step " << step << " row " << row;
        EXPECT_EQ(slice(got.labels), labels) << "step " << step << " row " << row;
        EXPECT_EQ(slice(got.seg), seg) << "step " << step << " row " << row;
      }
      ++step;
    }
    EXPECT_EQ(step, plan.steps_per_epoch(0));
  }
}

TEST(LoaderPlanTest, SameBatchesForAnyWorkerCount) {
  auto src = testing::RandomSource(9, 300, 120);
  std::vector<BatchDump> reference;
  for (int workers : {1, 2, 3, 8}) {
    auto loader = OpenOrDie({{"", src}}, PlanTestOptions(workers));
    ASSERT_NE(loader, nullptr);
    std::vector<BatchDump> all;
    for (int e = 0; e < 2; ++e) {
      while (true) {
        auto r = loader->Next();
        ASSERT_TRUE(r.ok());
        if (!r->has_value()) break;
        all.push_back(Dump(**r));
      }
    }
    if (reference.empty()) reference = all;
    EXPECT_EQ(all, reference) << "num_workers=" << workers;
  }
}

TEST(LoaderPlanTest, ResumeFromCheckpointJsonEqualsUninterruptedStream) {
  auto src = testing::RandomSource(9, 300, 120);
  auto loader = OpenOrDie({{"", src}}, PlanTestOptions(2));
  ASSERT_NE(loader, nullptr);
  std::vector<BatchDump> stream;
  std::vector<std::string> checkpoints;
  for (int e = 0; e < 2; ++e) {
    while (true) {
      auto r = loader->Next();
      ASSERT_TRUE(r.ok());
      if (!r->has_value()) break;
      stream.push_back(Dump(**r));
      checkpoints.push_back((*r)->state_after().ToJson());
    }
  }
  for (size_t k : {size_t{0}, size_t{7}, stream.size() / 2}) {
    auto state = PlanState::FromJson(checkpoints[k]);
    ASSERT_TRUE(state.ok());
    auto resumed = OpenOrDie({{"", src}}, PlanTestOptions(4), &*state);
    ASSERT_NE(resumed, nullptr);
    std::vector<BatchDump> rest;
    while (rest.size() + k + 1 < stream.size()) {
      auto r = resumed->Next();
      ASSERT_TRUE(r.ok());
      if (r->has_value()) rest.push_back(Dump(**r));
    }
    EXPECT_EQ(rest, std::vector<BatchDump>(stream.begin() + k + 1, stream.end())) << "k=" << k;
  }
}

TEST(LoaderPlanTest, CheckpointOfAnotherDatasetIsRefused) {
  auto a = testing::RandomSource(1, 100, 50);
  auto b = testing::RandomSource(2, 100, 50);
  auto la = OpenOrDie({{"", a}}, PlanTestOptions(1));
  ASSERT_NE(la, nullptr);
  PlanState state = la->State();
  auto lb = Loader::Open({{"", b}}, PlanTestOptions(1), &state);
  EXPECT_EQ(lb.status().code(), StatusCode::kFailedPrecondition);
}

TEST(LoaderPlanTest, OpensAMegatronDatasetByPath) {
  char tmpl[] = "/tmp/stoker_loader_test_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string prefix = std::string(tmpl) + "/data";
  std::vector<int32_t> lengths = {30, 45, 12, 80, 7, 64, 33, 50};
  std::vector<uint16_t> tokens;
  for (int32_t len : lengths) {
    for (int32_t i = 0; i < len; ++i) tokens.push_back(static_cast<uint16_t>(100 + tokens.size()));
  }
  std::ofstream(prefix + ".idx", std::ios::binary)
      << stoker::testing::IdxBytesFor(8 /* uint16 */, 2, lengths);
  std::ofstream(prefix + ".bin", std::ios::binary) << stoker::testing::ArrayBytes(tokens);
  LoaderOptions o = PlanTestOptions(2);
  o.batch_size = 2;
  o.seq_len = 40;
  o.shuffle = ShuffleMode::kNone;
  auto loader = OpenOrDie({{prefix, nullptr}}, o);
  ASSERT_NE(loader, nullptr);
  auto r = loader->Next();
  ASSERT_TRUE(r.ok() && r->has_value()) << r.status().ToString();
  // Source order, concat packing: row 0 starts with document 0's first token.
  EXPECT_EQ(Dump(**r).ids[0], 100);
  auto missing = Loader::Open({{std::string(tmpl) + "/nope", nullptr}}, o);
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("nope"), std::string::npos);
  std::filesystem::remove_all(tmpl);
}

// A Megatron input never seen: the first batches need no pass over its sizes; the checkpoint each
// batch carries is made (and the fingerprint's one hash pass paid) when first asked for.
TEST(LoaderPlanTest, AMegatronInputsFingerprintIsPaidAtTheFirstCheckpointNotTheFirstBatch) {
  char tmpl[] = "/tmp/stoker_loader_test_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string prefix = std::string(tmpl) + "/data";
  ASSERT_EQ(setenv("STOKER_CACHE_DIR", (std::string(tmpl) + "/cache").c_str(), 1), 0);
  std::vector<int32_t> lengths;
  std::vector<uint16_t> tokens;
  for (int d = 0; d < 3000; ++d) {
    lengths.push_back(1 + d % 50);
    for (int32_t i = 0; i < lengths.back(); ++i) tokens.push_back(static_cast<uint16_t>(d));
  }
  std::ofstream(prefix + ".idx", std::ios::binary)
      << stoker::testing::IdxBytesFor(8 /* uint16 */, 2, lengths);
  std::ofstream(prefix + ".bin", std::ios::binary) << stoker::testing::ArrayBytes(tokens);
  LoaderOptions o = PlanTestOptions(2);
  o.batch_size = 2;
  o.seq_len = 40;
  const uint64_t before = plan::MegatronLengthPasses();
  auto loader = OpenOrDie({{prefix, nullptr}}, o);
  ASSERT_NE(loader, nullptr);
  auto r = loader->Next();
  ASSERT_TRUE(r.ok() && r->has_value()) << r.status().ToString();
  EXPECT_EQ((*r)->position_after().rows_consumed, 2u);
  EXPECT_EQ(plan::MegatronLengthPasses(), before) << "no pass before the first batch";
  const PlanState& state = (*r)->state_after();
  EXPECT_EQ(state.position.rows_consumed, 2u);
  EXPECT_EQ(state.fingerprint, loader->plan()->fingerprint());
  EXPECT_EQ(plan::MegatronLengthPasses(), before + 1) << "one hash pass, at the checkpoint";
  ASSERT_EQ(setenv("STOKER_CACHE_DIR", "off", 1), 0);
  std::filesystem::remove_all(tmpl);
}

}  // namespace
}  // namespace stoker::loader
