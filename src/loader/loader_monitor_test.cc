// The live stall monitor fed by Loader::Next(): a slow consumer leaves the ratio high and stays
// quiet; a slowed source warns once, through the sink, on stderr by default, or silently.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "loader/loader_test_util.h"

namespace stoker::loader {
namespace {

using testing::ScriptedPlanner;

constexpr uint64_t kMonitorSeq = 256;
constexpr uint64_t kMonitorBatch = 2;

// Forwards to `inner`, sleeping `delay` in every read, like storage with added latency.
// Thread-safe.
class SlowTokenSource : public testing::ForwardingTokenSource {
 public:
  SlowTokenSource(std::shared_ptr<const TokenSource> inner, std::chrono::microseconds delay)
      : ForwardingTokenSource(std::move(inner)), delay_(delay) {}
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const override {
    std::this_thread::sleep_for(delay_);
    return ForwardingTokenSource::Read(doc, offset, count, out);
  }
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const override {
    std::this_thread::sleep_for(delay_);
    return ForwardingTokenSource::Read(doc, offset, count, out);
  }

 private:
  std::chrono::microseconds delay_;
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

// Takes `n` batches, "training" `step` after each; the batch is released before the step, as a
// training loop does once its device copy is consumed.
void Train(Loader& loader, int n, std::chrono::microseconds step) {
  for (int i = 0; i < n; ++i) {
    auto r = loader.Next();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(r->has_value());
    r->reset();
    std::this_thread::sleep_for(step);
  }
}

// A slowed source: ~8 reads of 1 ms per row, 2 rows per batch, 2 workers: ~8 ms per batch,
// against a 2 ms training step.
std::shared_ptr<const TokenSource> SlowSource() {
  return std::make_shared<SlowTokenSource>(MonitorSource(), std::chrono::microseconds(1000));
}
constexpr int kSlowBatches = 14;
constexpr std::chrono::microseconds kFastStep(2000);

TEST(LoaderMonitorTest, SlowConsumerKeepsTheRatioHighAndStaysQuiet) {
  std::vector<std::string> warnings;
  LoaderOptions o;
  o.monitor_sink = [&](const std::string& w) { warnings.push_back(w); };
  auto loader = OpenOrDie(MonitorSource(), o);
  ASSERT_NE(loader, nullptr);
  Train(*loader, 40, std::chrono::microseconds(5000));
  const LoaderStats s = loader->Stats();
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
  auto loader = OpenOrDie(SlowSource(), o);
  ASSERT_NE(loader, nullptr);
  Train(*loader, kSlowBatches, kFastStep);
  const LoaderStats s = loader->Stats();
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
  auto loader = OpenOrDie(SlowSource(), o);
  ASSERT_NE(loader, nullptr);
  Train(*loader, 3 * kSlowBatches, std::chrono::microseconds(0));
  const LoaderStats s = loader->Stats();
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  EXPECT_EQ(s.monitor_warnings, 0u);
  EXPECT_GT(s.monitor_stall_share, 0.5);  // it did wait: the verdict is withheld, not the figure
}

TEST(LoaderMonitorTest, WarnsOnStderrByDefault) {
  ::testing::internal::CaptureStderr();
  {
    auto loader = OpenOrDie(SlowSource(), LoaderOptions{});
    ASSERT_NE(loader, nullptr);
    Train(*loader, kSlowBatches, kFastStep);
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
    auto loader = OpenOrDie(SlowSource(), o);
    ASSERT_NE(loader, nullptr);
    Train(*loader, kSlowBatches, kFastStep);
    s = loader->Stats();
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
  Train(*loader, 5, std::chrono::microseconds(0));
  EXPECT_EQ(loader->Stats().monitor_batches, 4u);
  ASSERT_TRUE(loader->Restore(loader->State()).ok());
  Train(*loader, 5, std::chrono::microseconds(0));
  EXPECT_EQ(loader->Stats().monitor_batches, 8u);  // the window spans the Restore
  // Finish the epoch: its end is not a step either.
  const uint64_t steps = ScriptedPlanner(src, kMonitorSeq, kMonitorBatch, 5).steps(0);
  Train(*loader, static_cast<int>(steps - 10), std::chrono::microseconds(0));
  auto end = loader->Next();
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(end->has_value());
  Train(*loader, 3, std::chrono::microseconds(0));
  EXPECT_EQ(loader->Stats().monitor_batches, 8u + (steps - 10) + 2);
}

TEST(LoaderMonitorTest, SyntheticLoaderIsNotMonitored) {
  LoaderOptions o;
  o.batch_size = kMonitorBatch;
  o.seq_len = kMonitorSeq;
  auto loader = Loader::OpenSynthetic(o);
  ASSERT_TRUE(loader.ok()) << loader.status().ToString();
  Train(**loader, 20, std::chrono::microseconds(0));
  const LoaderStats s = (*loader)->Stats();
  EXPECT_EQ(s.batches, 20u);
  EXPECT_EQ(s.monitor_batches, 0u);
  EXPECT_EQ(s.monitor_warnings, 0u);
}

}  // namespace
}  // namespace stoker::loader
