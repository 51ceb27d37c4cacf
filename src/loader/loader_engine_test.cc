// The loader over a scripted planner: ordering, workers, resume, epochs, errors, shutdown.
#include <gtest/gtest.h>

#include <stdexcept>

#include "cuda/copier.h"
#include "loader/loader_internal.h"
#include "loader/loader_test_util.h"

namespace stoker::loader {
namespace {

using testing::BatchDump;
using testing::Dump;
using testing::ScriptedPlanner;

constexpr uint64_t kSeq = 64;
constexpr uint64_t kBatch = 4;
constexpr int64_t kIgnore = -100;

std::shared_ptr<MemoryTokenSource> Source() { return testing::RandomSource(7, 300, 150); }

std::shared_ptr<ScriptedPlanner> Planner(std::shared_ptr<const TokenSource> src) {
  return std::make_shared<ScriptedPlanner>(src, kSeq, kBatch, /*seed=*/3);
}

LoaderOptions Options(int workers) {
  LoaderOptions o;
  o.batch_size = kBatch;
  o.seq_len = kSeq;
  o.num_workers = workers;
  o.prefetch_factor = 2;
  return o;
}

std::unique_ptr<Loader> OpenOrDie(std::shared_ptr<const BatchPlanner> planner,
                                  std::shared_ptr<const TokenSource> src, const LoaderOptions& o,
                                  PlanPosition start = {}) {
  auto r = OpenLoaderWithPlanner(std::move(planner), {std::move(src)}, o, start);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : nullptr;
}

// Every remaining batch of the current epoch.
std::vector<BatchDump> Epoch(Loader& loader) {
  std::vector<BatchDump> out;
  while (true) {
    auto r = loader.Next();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok() || !r->has_value()) return out;
    out.push_back(Dump(**r));
  }
}

TEST(LoaderTest, SameBatchesForOneTwoThreeAndEightWorkers) {
  auto src = Source();
  auto planner = Planner(src);
  std::vector<std::vector<BatchDump>> reference;
  for (int workers : {1, 2, 3, 8}) {
    auto loader = OpenOrDie(planner, src, Options(workers));
    ASSERT_NE(loader, nullptr);
    std::vector<std::vector<BatchDump>> epochs = {Epoch(*loader), Epoch(*loader)};
    ASSERT_EQ(epochs[0].size(), planner->steps(0));
    ASSERT_EQ(epochs[1].size(), planner->steps(1));
    if (reference.empty()) {
      reference = epochs;
      EXPECT_NE(epochs[0], epochs[1]) << "each epoch has its own order";
    } else {
      EXPECT_EQ(epochs, reference) << "num_workers=" << workers;
    }
  }
}

TEST(LoaderTest, RowsHoldExactlyThePlannedTokens) {
  auto src = Source();
  auto planner = Planner(src);
  auto loader = OpenOrDie(planner, src, Options(3));
  ASSERT_NE(loader, nullptr);
  for (uint64_t step = 0; step < planner->steps(0); ++step) {
    auto r = loader->Next();
    ASSERT_TRUE(r.ok() && r->has_value());
    BatchDump got = Dump(**r);
    for (uint64_t row = 0; row < kBatch; ++row) {
      std::vector<int64_t> want_ids, want_labels;
      for (const RowPiece& p : planner->rows(0)[step * kBatch + row].pieces) {
        const auto& doc = src->document(p.document);
        for (uint64_t i = 0; i < p.length; ++i) {
          want_ids.push_back(doc[p.offset + i]);
          uint64_t next = p.offset + i + 1;
          want_labels.push_back(next < doc.size() ? doc[next] : kIgnore);
        }
      }
      want_ids.resize(kSeq, 0);
      want_labels.resize(kSeq, kIgnore);
      std::vector<int64_t> ids(got.ids.begin() + row * kSeq, got.ids.begin() + (row + 1) * kSeq);
      std::vector<int64_t> labels(got.labels.begin() + row * kSeq,
                                  got.labels.begin() + (row + 1) * kSeq);
      EXPECT_EQ(ids, want_ids) << "step " << step << " row " << row;
      EXPECT_EQ(labels, want_labels) << "step " << step << " row " << row;
    }
    EXPECT_EQ(got.cu.front(), 0);
    EXPECT_EQ(got.cu.back(), static_cast<int64_t>(kBatch * kSeq));
  }
}

TEST(LoaderTest, ResumeFromStateOfBatchKEqualsUninterruptedStream) {
  auto src = Source();
  auto planner = Planner(src);
  auto loader = OpenOrDie(planner, src, Options(2));
  ASSERT_NE(loader, nullptr);
  std::vector<BatchDump> stream;
  std::vector<PlanState> states;
  for (int e = 0; e < 2; ++e) {
    while (true) {
      auto r = loader->Next();
      ASSERT_TRUE(r.ok());
      if (!r->has_value()) break;
      stream.push_back(Dump(**r));
      states.push_back((*r)->state_after());
    }
  }
  const size_t epoch0 = planner->steps(0);
  for (size_t k : {size_t{0}, size_t{5}, epoch0 - 2, epoch0 - 1, epoch0 + 3}) {
    // A fresh loader opened at the state, and the same loader restored to it.
    auto resumed = OpenOrDie(planner, src, Options(3), states[k].position);
    ASSERT_NE(resumed, nullptr);
    ASSERT_TRUE(loader->Restore(states[k]).ok());
    EXPECT_EQ(loader->State().position, states[k].position);
    std::vector<BatchDump> rest, rest_restored;
    while (rest.size() + k + 1 < stream.size()) {
      auto a = resumed->Next();
      auto b = loader->Next();
      ASSERT_TRUE(a.ok() && b.ok());
      if (!a->has_value()) {  // the epoch boundary, seen by both at once
        ASSERT_FALSE(b->has_value());
        continue;
      }
      ASSERT_TRUE(b->has_value());
      rest.push_back(Dump(**a));
      rest_restored.push_back(Dump(**b));
    }
    std::vector<BatchDump> want(stream.begin() + k + 1, stream.end());
    EXPECT_EQ(rest, want) << "k=" << k;
    EXPECT_EQ(rest_restored, want) << "k=" << k;
  }
}

TEST(LoaderTest, EpochsRunBackToBackWithPersistentWorkers) {
  auto src = Source();
  auto planner = Planner(src);
  LoaderOptions persistent = Options(3);
  LoaderOptions fresh = Options(3);
  fresh.persistent_workers = false;
  auto a = OpenOrDie(planner, src, persistent);
  auto b = OpenOrDie(planner, src, fresh);
  ASSERT_TRUE(a && b);
  for (uint64_t e = 0; e < 3; ++e) {
    std::vector<BatchDump> ea = Epoch(*a), eb = Epoch(*b);
    ASSERT_EQ(ea.size(), planner->steps(e));
    EXPECT_EQ(ea, eb) << "epoch " << e;
    for (size_t i = 0; i < ea.size(); ++i) {
      EXPECT_EQ(ea[i].epoch, e);
      EXPECT_EQ(ea[i].step, i);
    }
    EXPECT_EQ(a->State().position, (PlanPosition{e + 1, 0}));
  }
  EXPECT_EQ(a->Stats().batches, planner->steps(0) + planner->steps(1) + planner->steps(2));
}

// The first batch of epoch 0 holding `doc`.
size_t FirstBatchWith(const ScriptedPlanner& planner, uint64_t doc) {
  for (size_t step = 0; step < planner.steps(0); ++step) {
    for (size_t r = 0; r < kBatch; ++r) {
      for (const RowPiece& p : planner.rows(0)[step * kBatch + r].pieces) {
        if (p.document == doc) return step;
      }
    }
  }
  return SIZE_MAX;
}

TEST(LoaderTest, InjectedReadErrorSurfacesAtItsBatchAndNothingHangs) {
  auto src = Source();
  auto planner = Planner(src);
  const uint64_t bad_doc = 123;
  const size_t bad_step = FirstBatchWith(*planner, bad_doc);
  ASSERT_LT(bad_step, planner->steps(0));
  auto clean = OpenOrDie(planner, src, Options(1));
  auto faulty_src = std::make_shared<testing::FaultyTokenSource>(src, bad_doc);
  for (int workers : {1, 8}) {
    auto loader = OpenOrDie(planner, faulty_src, Options(workers));
    ASSERT_NE(loader, nullptr);
    for (size_t step = 0; step < bad_step; ++step) {
      auto r = loader->Next();
      ASSERT_TRUE(r.ok() && r->has_value()) << "step " << step << ": " << r.status().ToString();
      if (workers == 1) {
        auto c = clean->Next();
        EXPECT_EQ(Dump(**r), Dump(**c));
      }
    }
    auto r = loader->Next();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kIOError);
    EXPECT_NE(r.status().message().find("document 123"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("step " + std::to_string(bad_step)), std::string::npos)
        << r.status().message();
    auto again = loader->Next();
    EXPECT_EQ(again.status().code(), StatusCode::kIOError) << "errors are sticky";
  }  // destruction after the error joins every worker
}

TEST(LoaderTest, SkipPolicyDeliversEveryBatchAndCountsTheBadDocument) {
  auto src = Source();
  auto planner = Planner(src);
  const uint64_t bad_doc = 123;
  uint64_t pieces = 0;
  for (size_t i = 0; i < planner->steps(0) * kBatch; ++i) {
    for (const RowPiece& p : planner->rows(0)[i].pieces) pieces += p.document == bad_doc;
  }
  ASSERT_GT(pieces, 0u);
  LoaderOptions o = Options(3);
  o.on_error = ErrorPolicy::kSkip;
  auto loader = OpenOrDie(planner, std::make_shared<testing::FaultyTokenSource>(src, bad_doc), o);
  ASSERT_NE(loader, nullptr);
  EXPECT_EQ(Epoch(*loader).size(), planner->steps(0));
  EXPECT_EQ(loader->Stats().skipped_documents, pieces);
}

// Throws from Read: a worker must turn this into its batch's error rather than die.
class ThrowingSource : public testing::FaultyTokenSource {
 public:
  using FaultyTokenSource::FaultyTokenSource;
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const override {
    if (doc == 5) throw std::runtime_error("boom");
    return FaultyTokenSource::Read(doc, offset, count, out);
  }
};

TEST(LoaderTest, WorkerExceptionBecomesTheBatchError) {
  auto src = Source();
  auto planner = Planner(src);
  auto loader = OpenOrDie(planner, std::make_shared<ThrowingSource>(src, -1), Options(4));
  ASSERT_NE(loader, nullptr);
  Status error;
  for (size_t i = 0; i < planner->steps(0) && error.ok(); ++i) error = loader->Next().status();
  EXPECT_EQ(error.code(), StatusCode::kInternal);
  EXPECT_NE(error.message().find("boom"), std::string::npos);
}

TEST(LoaderTest, EarlyDestructionMidEpochEndsCleanly) {
  auto src = Source();
  auto planner = Planner(src);
  {
    auto loader = OpenOrDie(planner, src, Options(8));  // destroyed before any Next()
  }
  std::optional<LoaderBatch> kept;
  BatchDump kept_dump;
  {
    auto loader = OpenOrDie(planner, src, Options(8));
    ASSERT_NE(loader, nullptr);
    for (int i = 0; i < 3; ++i) {
      auto r = loader->Next();
      ASSERT_TRUE(r.ok() && r->has_value());
      kept = std::move(**r);
    }
    kept_dump = Dump(*kept);
  }  // workers blocked on a full ring are cancelled and joined here
  ASSERT_TRUE(kept->valid());
  EXPECT_EQ(Dump(*kept), kept_dump) << "a batch keeps its memory after the loader is gone";
  kept->Release();
  EXPECT_FALSE(kept->valid());
}

TEST(LoaderTest, HoldingEverySlotIsAnErrorNotAHang) {
  auto src = Source();
  auto planner = Planner(src);
  LoaderOptions o = Options(1);
  o.prefetch_factor = 1;  // ring of 2 slots
  auto loader = OpenOrDie(planner, src, o);
  ASSERT_NE(loader, nullptr);
  auto a = loader->Next();
  auto b = loader->Next();
  ASSERT_TRUE(a.ok() && b.ok());
  auto c = loader->Next();
  EXPECT_EQ(c.status().code(), StatusCode::kFailedPrecondition);
  (*a)->Release();
  auto d = loader->Next();
  ASSERT_TRUE(d.ok() && d->has_value());
  EXPECT_EQ((*d)->step(), 2u);
}

TEST(LoaderTest, NoGpuMeansHostBatches) {
  if (cuda::DeviceCount() > 0) GTEST_SKIP() << "a CUDA device is present";
  auto src = Source();
  LoaderOptions o = Options(2);
  o.device = 0;
  o.pin_memory = true;
  auto loader = OpenOrDie(Planner(src), src, o);
  ASSERT_NE(loader, nullptr);
  auto r = loader->Next();
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_FALSE((*r)->on_device());
  EXPECT_EQ((*r)->device_input_ids().data, nullptr);
  EXPECT_NE((*r)->input_ids().data, nullptr);
  EXPECT_EQ((*r)->input_ids().device, -1);
  EXPECT_TRUE((*r)->WaitOnStream(nullptr).ok());
  EXPECT_TRUE((*r)->Synchronize().ok());
  LoaderStats s = loader->Stats();
  EXPECT_FALSE(s.device_batches);
  EXPECT_FALSE(s.pinned);
}

TEST(LoaderTest, StatsCountDeliveredBatchesAndOccupancy) {
  auto src = Source();
  auto planner = Planner(src);
  auto loader = OpenOrDie(planner, src, Options(2));
  ASSERT_NE(loader, nullptr);
  size_t n = Epoch(*loader).size();
  LoaderStats s = loader->Stats();
  EXPECT_EQ(s.batches, n);
  EXPECT_EQ(s.samples, n * kBatch);
  EXPECT_EQ(s.tokens, n * kBatch * kSeq);
  EXPECT_LE(s.real_tokens, s.tokens);
  EXPECT_GT(s.real_tokens, 0u);
  EXPECT_EQ(s.num_workers, 2);
  EXPECT_EQ(s.ring_slots, 2 * 2 + 1);
  EXPECT_LE(s.slots_in_use, s.ring_slots);
  EXPECT_LE(s.slots_ready, s.ring_slots);
  EXPECT_GE(s.wait_total_ms, s.wait_max_ms);
  EXPECT_GE(s.read_s, 0.0);
}

TEST(LoaderTest, Int32TokensMatchInt64Tokens) {
  auto src = Source();
  auto planner = Planner(src);
  LoaderOptions o32 = Options(2);
  o32.token_dtype = TokenDType::kInt32;
  auto a = OpenOrDie(planner, src, Options(2));
  auto b = OpenOrDie(planner, src, o32);
  ASSERT_TRUE(a && b);
  auto ra = a->Next();
  auto rb = b->Next();
  ASSERT_TRUE(ra.ok() && rb.ok());
  EXPECT_EQ((*rb)->input_ids().dtype, TokenDType::kInt32);
  EXPECT_EQ(Dump(**ra), Dump(**rb));
}

TEST(LoaderTest, BatchesWithoutPositionAndSegmentIds) {
  auto src = Source();
  auto planner = Planner(src);
  LoaderOptions lean = Options(3);
  lean.position_ids = lean.segment_ids = false;
  auto a = OpenOrDie(planner, src, Options(2));
  auto b = OpenOrDie(planner, src, lean);
  ASSERT_TRUE(a && b);
  std::vector<BatchDump> full = Epoch(*a), got = Epoch(*b);
  ASSERT_EQ(got.size(), full.size());
  ASSERT_GT(got.size(), 3u);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].ids, full[i].ids) << "batch " << i;
    EXPECT_EQ(got[i].labels, full[i].labels) << "batch " << i;
    EXPECT_EQ(got[i].cu, full[i].cu) << "batch " << i;
    EXPECT_TRUE(got[i].pos.empty() && got[i].seg.empty());
    EXPECT_FALSE(full[i].pos.empty() || full[i].seg.empty());
  }
  // The dense mask is built from segment ids.
  LoaderOptions bad = lean;
  bad.attention_mask = true;
  auto r = OpenLoaderWithPlanner(planner, {src}, bad, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("segment_ids"), std::string::npos) << r.status().ToString();
}

TEST(LoaderTest, SyntheticSourceServesOneFixedBatchForever) {
  LoaderOptions o = Options(1);
  o.seq_len = 128;
  auto r = Loader::OpenSynthetic(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto& loader = *r;
  BatchDump first;
  for (uint64_t i = 0; i < 1000; ++i) {
    auto b = loader->Next();
    ASSERT_TRUE(b.ok() && b->has_value());
    BatchDump d = Dump(**b);
    EXPECT_EQ(d.step, i);
    d.step = 0;
    if (i == 0) first = d;
    ASSERT_EQ(d, first);
  }
  EXPECT_EQ(first.cu.back(), static_cast<int64_t>(kBatch * 128));
  EXPECT_EQ(loader->Stats().batches, 1000u);
}

}  // namespace
}  // namespace stoker::loader
