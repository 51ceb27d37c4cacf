// The live stall monitor fed by Loader::Next(): a slow consumer leaves the ratio high and stays
// quiet; a slowed source warns once, through the sink, on stderr by default, or silently. Time is
// a test clock moved by hand (GatedClock below): no test here sleeps or depends on the machine.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "loader/loader_test_util.h"

namespace stoker::loader {
namespace {

using testing::ScriptedPlanner;

constexpr uint64_t kMonitorSeq = 256;
constexpr uint64_t kMonitorBatch = 2;

// Time for these tests, on the clock the loader and its monitor read (common/clock.h), moved by
// hand: a source read costs its latency, a training step its length, and nothing else moves it,
// so every figure the monitor sees is exact whatever the machine's load. A gate keeps the worker
// from planning a batch while the consumer works: the consumer arms it when it lets its previous
// batch go, and its next clock reading, the one Loader::Next takes on entry, hands the worker one
// batch to plan. A batch is thus read only while the consumer waits for it. Thread-safe.
class GatedClock : public Clock {
 public:
  GatedClock() : driver_(std::this_thread::get_id()) {}
  int64_t NowNs() override {
    // The time is read before the permit is given: the worker's reads come after this reading.
    const int64_t now_ns = time_.NowNs();
    if (std::this_thread::get_id() == driver_) {
      std::lock_guard<std::mutex> lock(mu_);
      if (armed_) {
        armed_ = false;
        ++permits_;
        cv_.notify_all();
      }
    }
    return now_ns;
  }
  void AdvanceNs(int64_t ns) { time_.AdvanceNs(ns); }
  // Consumer: its next clock reading lets one batch be planned.
  void Arm() {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = true;
  }
  // Lets every batch be planned from now on (before the loader's workers are joined).
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  // Worker: blocks until it may plan one batch.
  void TakePermit() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return released_ || permits_ > 0; });
    if (!released_) --permits_;
  }

 private:
  const std::thread::id driver_;
  ManualClock time_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = true;
  bool released_ = false;
  int permits_ = 0;
};

// ScriptedPlanner behind the gate of a GatedClock. Thread-safe.
class GatedPlanner final : public BatchPlanner {
 public:
  GatedPlanner(std::shared_ptr<const BatchPlanner> inner, GatedClock* clock)
      : inner_(std::move(inner)), clock_(clock) {}
  PlanPosition Normalize(const PlanPosition& pos) const override { return inner_->Normalize(pos); }
  PlanPosition Advance(const PlanPosition& pos) const override { return inner_->Advance(pos); }
  Status BatchAt(const PlanPosition& pos, Batch* out) const override {
    clock_->TakePermit();
    return inner_->BatchAt(pos, out);
  }
  PlanState MakeState(const PlanPosition& pos) const override { return inner_->MakeState(pos); }
  Result<PlanPosition> RestorePosition(const PlanState& state) const override {
    return inner_->RestorePosition(state);
  }

 private:
  std::shared_ptr<const BatchPlanner> inner_;
  GatedClock* clock_;
};

// Forwards to `inner`; every read costs `latency` of the clock, like storage with added latency.
// Thread-safe.
class SlowTokenSource : public testing::ForwardingTokenSource {
 public:
  SlowTokenSource(std::shared_ptr<const TokenSource> inner, GatedClock* clock,
                  std::chrono::microseconds latency)
      : ForwardingTokenSource(std::move(inner)), clock_(clock), latency_(latency) {}
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const override {
    clock_->AdvanceNs(std::chrono::nanoseconds(latency_).count());
    return ForwardingTokenSource::Read(doc, offset, count, out);
  }
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const override {
    clock_->AdvanceNs(std::chrono::nanoseconds(latency_).count());
    return ForwardingTokenSource::Read(doc, offset, count, out);
  }

 private:
  GatedClock* clock_;
  std::chrono::microseconds latency_;
};

// Documents of up to 64 tokens: a row of 256 tokens takes about 8 reads.
std::shared_ptr<const TokenSource> MonitorSource() { return testing::RandomSource(11, 2000, 64); }

std::unique_ptr<Loader> OpenOrDie(std::shared_ptr<const TokenSource> src, LoaderOptions o) {
  o.batch_size = kMonitorBatch;
  o.seq_len = kMonitorSeq;
  o.num_workers = 2;
  auto planner = std::make_shared<ScriptedPlanner>(src, kMonitorSeq, kMonitorBatch, /*seed=*/5);
  auto r = Loader::OpenWithPlanner(std::move(planner), {std::move(src)}, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : nullptr;
}

// Takes `n` batches with no training step between them (for the tests that count batches).
void Drain(Loader& loader, int n) {
  for (int i = 0; i < n; ++i) {
    auto r = loader.Next();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(r->has_value());
  }
}

// A loader over a SlowTokenSource and a GatedPlanner, on a GatedClock installed for its
// lifetime. One worker and a ring of two slots; the consumer keeps each batch through its step
// and lets it go just before asking for the next one, so that while it works it holds both slots
// and the worker waits. Each batch from the second on is planned and read inside the consumer's
// wait for it; only the second batch's fill began (its time stamp, not its reads) during the
// first step, which then counts as assembly time.
class ClockedLoader {
 public:
  ClockedLoader(std::chrono::microseconds read_latency, LoaderOptions o)
      : installed_(&clock_),
        source_(std::make_shared<SlowTokenSource>(MonitorSource(), &clock_, read_latency)) {
    o.batch_size = kMonitorBatch;
    o.seq_len = kMonitorSeq;
    o.num_workers = 1;
    o.prefetch_factor = 1;  // a ring of 2 slots
    auto planner = std::make_shared<GatedPlanner>(
        std::make_shared<ScriptedPlanner>(source_, kMonitorSeq, kMonitorBatch, /*seed=*/5),
        &clock_);
    auto r = Loader::OpenWithPlanner(std::move(planner), {source_}, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok()) loader_ = std::move(r).value();
  }
  ~ClockedLoader() {
    clock_.Release();
    held_.reset();
    loader_.reset();
  }
  bool ok() const { return loader_ != nullptr; }
  LoaderStats Stats() const { return loader_->Stats(); }

  // Takes `n` batches, "training" `step` of the clock after each.
  void Train(int n, std::chrono::microseconds step) {
    for (int i = 0; i < n; ++i) {
      auto r = loader_->Next();
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_TRUE(r->has_value());
      clock_.AdvanceNs(std::chrono::nanoseconds(step).count());
      clock_.Arm();
      held_ = std::move(*r);  // lets the previous batch go
    }
  }

 private:
  GatedClock clock_;
  ScopedTestClock installed_;
  std::shared_ptr<const TokenSource> source_;
  std::unique_ptr<Loader> loader_;
  std::optional<LoaderBatch> held_;
};

// A slowed source: ~8 reads of 1 ms per row, 2 rows per batch: ~16 ms per batch, against a 2 ms
// training step (a ratio of about 0.12, a stall share of about 0.89).
constexpr std::chrono::microseconds kSlowRead(1000);
constexpr int kSlowBatches = 80;  // well past the monitor's half second of evidence
constexpr std::chrono::microseconds kFastStep(2000);
// A fast source: ~16 reads of 10 us per batch (about 0.16 ms) against a 5 ms step.
constexpr std::chrono::microseconds kFastRead(10);

TEST(LoaderMonitorTest, SlowConsumerKeepsTheRatioHighAndStaysQuiet) {
  std::vector<std::string> warnings;
  LoaderOptions o;
  o.monitor_sink = [&](const std::string& w) { warnings.push_back(w); };
  ClockedLoader loader(kFastRead, o);
  ASSERT_TRUE(loader.ok());
  loader.Train(40, std::chrono::microseconds(5000));
  const LoaderStats s = loader.Stats();
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  EXPECT_EQ(s.monitor_batches, 39u);  // the first batch has no step before it
  EXPECT_GT(s.monitor_ratio, 2.0);
  EXPECT_GT(s.monitor_deliverable_tokens_per_s, s.monitor_consumed_tokens_per_s);
  EXPECT_LT(s.monitor_stall_share, 0.05);
  EXPECT_FALSE(s.monitor_warned);
  EXPECT_EQ(s.monitor_warnings, 0u);
}

TEST(LoaderMonitorTest, SlowedSourceWarnsOnceThroughTheSink) {
  std::vector<std::string> warnings;
  LoaderOptions o;
  o.monitor_sink = [&](const std::string& w) { warnings.push_back(w); };
  ClockedLoader loader(kSlowRead, o);
  ASSERT_TRUE(loader.ok());
  loader.Train(kSlowBatches, kFastStep);
  const LoaderStats s = loader.Stats();
  ASSERT_EQ(warnings.size(), 1u);  // rate-limited: once
  EXPECT_NE(warnings[0].find("below 1.20x"), std::string::npos) << warnings[0];
  EXPECT_LT(s.monitor_ratio, 1.2);
  EXPECT_GT(s.monitor_ratio, 0);
  EXPECT_GT(s.monitor_stall_share, 0.05);
  EXPECT_TRUE(s.monitor_warned);
  EXPECT_EQ(s.monitor_warnings, 1u);
}

TEST(LoaderMonitorTest, LoopThatTrainsNothingStaysQuiet) {
  // The slowed source keeps a bare loop waiting nearly all the time, but nothing is trained.
  std::vector<std::string> warnings;
  LoaderOptions o;
  o.monitor_sink = [&](const std::string& w) { warnings.push_back(w); };
  ClockedLoader loader(kSlowRead, o);
  ASSERT_TRUE(loader.ok());
  loader.Train(42, std::chrono::microseconds(0));
  const LoaderStats s = loader.Stats();
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  EXPECT_EQ(s.monitor_warnings, 0u);
  EXPECT_GT(s.monitor_stall_share, 0.5);  // it did wait: the verdict is withheld, not the figure
}

TEST(LoaderMonitorTest, WarnsOnStderrByDefault) {
  ::testing::internal::CaptureStderr();
  {
    ClockedLoader loader(kSlowRead, LoaderOptions{});
    ASSERT_TRUE(loader.ok());
    loader.Train(kSlowBatches, kFastStep);
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("stoker: warning: the loader can deliver"), std::string::npos) << err;
  EXPECT_EQ(err.find("stoker: warning:"), err.rfind("stoker: warning:")) << err;
}

TEST(LoaderMonitorTest, SilencedWarningsAreCountedNotPrinted) {
  ::testing::internal::CaptureStderr();
  LoaderStats s;
  {
    LoaderOptions o;
    o.monitor_warnings = false;
    ClockedLoader loader(kSlowRead, o);
    ASSERT_TRUE(loader.ok());
    loader.Train(kSlowBatches, kFastStep);
    s = loader.Stats();
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("warning"), std::string::npos) << err;
  EXPECT_EQ(s.monitor_warnings, 1u);
  EXPECT_LT(s.monitor_ratio, 1.2);
}

TEST(LoaderMonitorTest, NoStepIsMeasuredAcrossRestoreOrEpochEnd) {
  LoaderOptions o;
  o.monitor_warnings = false;
  auto src = MonitorSource();
  auto loader = OpenOrDie(src, o);
  ASSERT_NE(loader, nullptr);
  Drain(*loader, 5);
  EXPECT_EQ(loader->Stats().monitor_batches, 4u);
  ASSERT_TRUE(loader->Restore(loader->State()).ok());
  Drain(*loader, 5);
  EXPECT_EQ(loader->Stats().monitor_batches, 8u);  // the window spans the Restore
  // Finish the epoch: its end is not a step either.
  const uint64_t steps = ScriptedPlanner(src, kMonitorSeq, kMonitorBatch, 5).steps(0);
  Drain(*loader, static_cast<int>(steps - 10));
  auto end = loader->Next();
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(end->has_value());
  Drain(*loader, 3);
  EXPECT_EQ(loader->Stats().monitor_batches, 8u + (steps - 10) + 2);
}

TEST(LoaderMonitorTest, SyntheticLoaderIsNotMonitored) {
  LoaderOptions o;
  o.batch_size = kMonitorBatch;
  o.seq_len = kMonitorSeq;
  auto loader = Loader::OpenSynthetic(o);
  ASSERT_TRUE(loader.ok()) << loader.status().ToString();
  Drain(**loader, 20);
  const LoaderStats s = (*loader)->Stats();
  EXPECT_EQ(s.batches, 20u);
  EXPECT_EQ(s.monitor_batches, 0u);
  EXPECT_EQ(s.monitor_warnings, 0u);
}

}  // namespace
}  // namespace stoker::loader
