// StallMonitor: watches, during training, whether the loader keeps up with the consumer.
//
// Fed once per delivered batch with how long the consumer waited for it (the data stall), how long
// the consumer worked since the previous batch (its training step), the batch's tokens and,
// when known, how long the pipeline needed to produce it at full parallelism. Over a sliding time
// window it derives the stall share, the consumed and deliverable tokens/s and their ratio, and
// warns through a sink — at most once per `warn_interval_s` — when the ratio is below `min_ratio`
// (the 1.2x rule) or the stall share above `max_stall_share`. A consumer that does no real work
// between batches (a bare loop, a mean step under `min_consumer_step_s`) is not training: it gets
// no verdict, since any loader keeps it waiting. Record() costs O(1) amortized (the
// window keeps running sums), so it can run on every Next(). Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>

#include "common/thread_annotations.h"

namespace stoker::loader {

struct StallMonitorOptions {
  double window_s = 30;         // sliding window length
  uint64_t max_batches = 4096;  // the window also ends this many batches back (bounds memory)
  uint64_t min_batches = 8;     // no verdict before this many batches in the window
  // ... nor before the window holds this much time (waits and consumer work): the first batches
  // of a short run (8 in 0.06 s, the pipeline still starting) are noise, not evidence of a stall.
  double min_evidence_s = 0.5;
  // No verdict while the consumer's mean time per batch in the window is below this: a loop that
  // trains nothing (Python's `for batch in loader: pass` takes ~20 us) always waits. The fastest
  // real training steps (small models on a GPU) take milliseconds.
  double min_consumer_step_s = 0.001;
  double min_ratio = 1.2;         // deliverable / consumed below this warns
  double max_stall_share = 0.05;  // wait / (wait + consumer time) above this warns
  double warn_interval_s = 300;   // at most one warning per interval
  // Monotonic seconds; default SteadyNowNs() (common/clock.h: steady_clock, or the test clock a
  // test has installed). Tests inject a fake clock here or there.
  std::function<double()> clock;
  // Receives each warning line, on the thread calling Record(); default prints
  // "stoker: warning: ..." on stderr. Warnings are counted whether or not a sink prints them.
  std::function<void(const std::string&)> sink;
};

// What the window holds now.
struct StallWindow {
  uint64_t batches = 0;
  uint64_t tokens = 0;
  double span_s = 0;                    // clock time covered by the batches in the window
  double wait_s = 0;                    // consumer waits, summed
  double consumer_s = 0;                // consumer work, summed
  double produce_s = 0;                 // pipeline time per batch at full parallelism, summed
  bool produce_known = false;           // every batch in the window carried a produce time
  double stall_share = 0;               // wait / (wait + consumer)
  double consumed_tokens_per_s = 0;     // tokens / consumer time: what training would take
  double deliverable_tokens_per_s = 0;  // tokens / produce time (0 when unknown)
  double ratio = 0;                     // deliverable / consumed (0 when unknown)
};

class StallMonitor {
 public:
  explicit StallMonitor(StallMonitorOptions options = {});

  // Records one delivered batch. `produce_s` < 0 means unknown (then only the stall share is
  // judged). Negative waits or consumer times are clamped to 0. May call the sink.
  void Record(double wait_s, double consumer_s, uint64_t tokens, double produce_s = -1);

  StallWindow Window() const;
  // Warnings emitted so far.
  uint64_t warnings() const;
  const StallMonitorOptions& options() const { return options_; }

 private:
  struct Entry {
    double t_s;
    double wait_s, consumer_s, produce_s;
    uint64_t tokens;
  };
  // Sums over entries_, kept in integer nanoseconds so that adding and removing entries is exact.
  struct Sums {
    int64_t wait_ns = 0, consumer_ns = 0, produce_ns = 0;
    uint64_t tokens = 0, unknown_produce = 0;
    void Add(const Entry& e, int sign);
  };
  double Now() const;
  // *Locked: mu_ held.
  void PopFrontLocked();
  StallWindow ComputeLocked(double now_s) const;
  // The warning text, or "" when the window is healthy or too small to judge.
  std::string JudgeLocked(const StallWindow& w) const;

  StallMonitorOptions options_;
  mutable std::mutex mu_;
  std::deque<Entry> entries_ STOKER_GUARDED_BY(mu_);
  Sums sums_ STOKER_GUARDED_BY(mu_);
  double last_warn_s_ STOKER_GUARDED_BY(mu_) = 0;
  bool warned_ STOKER_GUARDED_BY(mu_) = false;
  uint64_t warnings_ STOKER_GUARDED_BY(mu_) = 0;
};

}  // namespace stoker::loader
