#include "loader/stall_monitor.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"

namespace stoker::loader {
namespace {

// A consumer loop on a fake clock: each batch the consumer waits `wait_s`, then works `step_s`.
struct FakeTraining {
  double now_s = 1000;
  std::vector<std::string> warnings;
  StallMonitor monitor;

  explicit FakeTraining(StallMonitorOptions o = {})
      : monitor([this, o]() mutable {
          o.clock = [this] { return now_s; };
          o.sink = [this](const std::string& w) { warnings.push_back(w); };
          return o;
        }()) {}

  void Steps(int n, double wait_s, double step_s, uint64_t tokens, double produce_s = -1) {
    for (int i = 0; i < n; ++i) {
      now_s += wait_s + step_s;
      monitor.Record(wait_s, step_s, tokens, produce_s);
    }
  }
};

// Without a clock of its own the monitor reads SteadyNowNs(), so the test clock a loader test
// installs (common/clock.h) is the one its window is measured on.
TEST(StallMonitorTest, DefaultClockIsTheInstalledTestClock) {
  ManualClock clock;
  ScopedTestClock installed(&clock);
  StallMonitorOptions o;
  o.sink = [](const std::string&) {};
  StallMonitor monitor(o);
  for (int i = 0; i < 10; ++i) {
    clock.AdvanceNs(1'000'000'000);
    monitor.Record(0, 1.0, 100);
  }
  EXPECT_EQ(monitor.Window().batches, 10u);
  EXPECT_NEAR(monitor.Window().span_s, 10.0, 1e-9);
  clock.AdvanceNs(31'000'000'000);  // past the 30 s window: only the newest batch is kept
  EXPECT_EQ(monitor.Window().batches, 1u);
}

TEST(StallMonitorTest, FastLoaderStaysQuiet) {
  FakeTraining t;
  // Step 100 ms for 65,536 tokens; the pipeline needs 20 ms per batch: 5x headroom, no waits.
  t.Steps(2000, 0.0001, 0.1, 65536, 0.02);
  EXPECT_TRUE(t.warnings.empty());
  StallWindow w = t.monitor.Window();
  EXPECT_NEAR(w.ratio, 5.0, 1e-6);
  EXPECT_NEAR(w.consumed_tokens_per_s, 655360, 1);
  EXPECT_NEAR(w.deliverable_tokens_per_s, 65536 / 0.02, 1);
  EXPECT_LT(w.stall_share, 0.01);
  // The window holds about 30 s of 100 ms batches, not all 2000.
  EXPECT_GE(w.batches, 295u);
  EXPECT_LE(w.batches, 301u);
}

TEST(StallMonitorTest, SlowSourceWarnsOnceRateLimited) {
  FakeTraining t;
  // The pipeline needs 100 ms per batch, training only 50 ms: the consumer waits 50 ms each time.
  t.Steps(100, 0.05, 0.05, 1000, 0.1);
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_NE(t.warnings[0].find("0.50x, below 1.20x"), std::string::npos) << t.warnings[0];
  EXPECT_EQ(t.monitor.warnings(), 1u);
  StallWindow w = t.monitor.Window();
  EXPECT_NEAR(w.stall_share, 0.5, 1e-9);
  EXPECT_NEAR(w.ratio, 0.5, 1e-9);
  // 10 s of batches so far; the next warning may come 300 s after the first.
  t.Steps(2900, 0.05, 0.05, 1000, 0.1);  // 290 s more
  EXPECT_EQ(t.warnings.size(), 1u);
  t.Steps(200, 0.05, 0.05, 1000, 0.1);  // past 300 s
  EXPECT_EQ(t.warnings.size(), 2u);
}

TEST(StallMonitorTest, NoVerdictBeforeMinBatches) {
  FakeTraining t;
  t.Steps(7, 0.5, 0.01, 1000, 1.0);
  EXPECT_TRUE(t.warnings.empty());
  t.Steps(1, 0.5, 0.01, 1000, 1.0);
  EXPECT_EQ(t.warnings.size(), 1u);
}

TEST(StallMonitorTest, AShortRunIsNoEvidence) {
  // 8 batches in 0.06 s, the consumer waiting for most of it (the pipeline still starting): no
  // verdict. The same stall kept up for half a second of the run is one.
  FakeTraining t;
  t.Steps(8, 0.006, 0.0015, 1000, 0.008);
  EXPECT_TRUE(t.warnings.empty()) << t.warnings[0];
  t.Steps(60, 0.006, 0.0015, 1000, 0.008);
  EXPECT_EQ(t.warnings.size(), 1u);
}

TEST(StallMonitorTest, LoopThatTrainsNothingGetsNoVerdict) {
  // A bare `for batch in loader` loop: 20 us of consumer work, 5 us of wait per batch (20%
  // stall) and a pipeline at 0.1x of that loop's pace: nothing here is training.
  FakeTraining bare;
  bare.Steps(1000, 0.000005, 0.00002, 1000, 0.0002);
  EXPECT_TRUE(bare.warnings.empty()) << bare.warnings[0];
  EXPECT_GT(bare.monitor.Window().stall_share, 0.1);
  // The same loader under a real 5 ms step that it cannot keep up with warns, and says how to
  // silence the warning.
  FakeTraining real;
  real.Steps(100, 0.005, 0.005, 1000, 0.01);
  ASSERT_EQ(real.warnings.size(), 1u);
  EXPECT_NE(real.warnings[0].find("silence this with monitor_warnings=False"), std::string::npos)
      << real.warnings[0];
}

TEST(StallMonitorTest, StepFloorIsTheMeanOverTheWindow) {
  StallMonitorOptions o;
  o.min_consumer_step_s = 0.002;
  FakeTraining below(o);
  below.Steps(100, 0.01, 0.0019, 1000);  // big stalls, but a mean step under the floor
  EXPECT_TRUE(below.warnings.empty());
  FakeTraining above(o);
  above.Steps(100, 0.01, 0.0021, 1000);
  EXPECT_EQ(above.warnings.size(), 1u);
}

TEST(StallMonitorTest, RatioJustBelowThresholdWarnsJustAboveDoesNot) {
  FakeTraining above;
  above.Steps(50, 0, 0.121, 1000, 0.1);  // 1.21x
  EXPECT_TRUE(above.warnings.empty());
  FakeTraining below;
  below.Steps(50, 0, 0.119, 1000, 0.1);  // 1.19x: no stall yet, but no headroom either
  ASSERT_EQ(below.warnings.size(), 1u);
  EXPECT_NE(below.warnings[0].find("1.19x"), std::string::npos) << below.warnings[0];
}

TEST(StallMonitorTest, StallShareWarnsWithoutProduceTime) {
  FakeTraining quiet;
  quiet.Steps(100, 0.001, 0.1, 1000);  // 1% stall, under the 5% default
  EXPECT_TRUE(quiet.warnings.empty());
  EXPECT_FALSE(quiet.monitor.Window().produce_known);
  FakeTraining stalled;
  stalled.Steps(100, 0.01, 0.1, 1000);  // 9.1% stall
  ASSERT_EQ(stalled.warnings.size(), 1u);
  EXPECT_NE(stalled.warnings[0].find("data stall: the consumer waited 9.1%"), std::string::npos)
      << stalled.warnings[0];
}

TEST(StallMonitorTest, RecoveredLoaderLeavesTheWindow) {
  StallMonitorOptions o;
  o.window_s = 10;
  FakeTraining t(o);
  t.Steps(20, 0.2, 0.1, 1000, 0.3);  // slow start: warns
  EXPECT_EQ(t.warnings.size(), 1u);
  t.Steps(200, 0, 0.1, 1000, 0.01);  // 20 s healthy: the slow batches age out
  StallWindow w = t.monitor.Window();
  EXPECT_NEAR(w.stall_share, 0, 1e-9);
  EXPECT_NEAR(w.ratio, 10, 1e-6);
  EXPECT_LE(w.batches, 101u);
}

TEST(StallMonitorTest, WindowIsBoundedInBatchesAndSumsStayExact) {
  StallMonitorOptions o;
  o.max_batches = 100;
  FakeTraining t(o);
  t.Steps(1000, 0.2, 0.1, 1000, 0.3);  // slow: in, then out of the window
  t.Steps(100, 0, 0.1, 1000, 0.01);    // all within 30 s, but only the last 100 count
  StallWindow w = t.monitor.Window();
  EXPECT_EQ(w.batches, 100u);
  EXPECT_EQ(w.tokens, 100000u);
  EXPECT_NEAR(w.wait_s, 0, 1e-12);
  EXPECT_NEAR(w.consumer_s, 10, 1e-9);
  EXPECT_NEAR(w.ratio, 10, 1e-6);
  EXPECT_TRUE(w.produce_known);
}

TEST(StallMonitorTest, ConcurrentRecordAndWindow) {
  StallMonitorOptions o;
  o.sink = [](const std::string&) {};
  StallMonitor m(o);
  std::thread reader([&] {
    for (int i = 0; i < 2000; ++i) (void)m.Window();
  });
  for (int i = 0; i < 2000; ++i) m.Record(0.0, 0.001, 10, 0.0001);
  reader.join();
  EXPECT_EQ(m.Window().batches, 2000u);
}

}  // namespace
}  // namespace stoker::loader
