// The monotonic clock the loader's counters, timeouts and stall monitor are measured with, and
// the seam through which a test replaces it: while a test clock is installed (ScopedTestClock),
// SteadyNowNs() reads it on every thread, so a test drives time by hand instead of sleeping.
// SteadyNowNs() is thread-safe; install a test clock before the threads that read it start and
// remove it after they have ended.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace stoker {

// A source of monotonic nanoseconds (only differences are meaningful). Implementations are
// thread-safe: NowNs() is called from every loader thread.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowNs() = 0;
};

namespace clock_internal {
inline std::atomic<Clock*> test_clock{nullptr};
}  // namespace clock_internal

// Nanoseconds on std::chrono::steady_clock, or on the installed test clock.
inline int64_t SteadyNowNs() {
  if (Clock* c = clock_internal::test_clock.load(std::memory_order_acquire)) return c->NowNs();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Installs `clock` (owned by the caller, outliving this object) for SteadyNowNs() until
// destruction. Tests only; not nestable. Not thread-safe: one installer at a time.
class ScopedTestClock {
 public:
  explicit ScopedTestClock(Clock* clock) {
    clock_internal::test_clock.store(clock, std::memory_order_release);
  }
  ~ScopedTestClock() { clock_internal::test_clock.store(nullptr, std::memory_order_release); }
  ScopedTestClock(const ScopedTestClock&) = delete;
  ScopedTestClock& operator=(const ScopedTestClock&) = delete;
};

// A clock that moves only when told. Thread-safe.
class ManualClock : public Clock {
 public:
  explicit ManualClock(int64_t start_ns = 1'000'000'000) : now_ns_(start_ns) {}
  int64_t NowNs() override { return now_ns_.load(std::memory_order_acquire); }
  void AdvanceNs(int64_t ns) { now_ns_.fetch_add(ns, std::memory_order_acq_rel); }

 private:
  std::atomic<int64_t> now_ns_;
};

}  // namespace stoker
