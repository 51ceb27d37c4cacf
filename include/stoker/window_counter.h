// WindowCounter: how a Plan (stoker/plan.h) counts a whole epoch's best-fit windows when it needs
// them all at once (a resume far into an epoch). The plan itself starts no threads and writes no
// file: with no counter it counts on the calling thread. SharedWindowCounter() counts in parallel
// and shares the counts between the processes of a machine through the cache root's plan/
// directory (docs/plan.md, "Thread safety and cost"); the loader, the CLI and Python use it.
// Thread-safe: Count may be called from many threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace stoker {

// What a set of window counts depends on: a cache file's name is made of it.
struct WindowCountsKey {
  std::string fingerprint;  // the plan's
  uint32_t dataset = 0;
  uint64_t epoch = 0;
  uint64_t num_windows = 0;
  std::string FileName() const;  // "plan-<fingerprint>-d<dataset>-e<epoch>-w<windows>.counts"
};

class WindowCounter {
 public:
  virtual ~WindowCounter() = default;
  // amount(w) for every window w in [0, key.num_windows). `amount` is thread-safe. After
  // counting, `shareable()` says whether the counts may be kept for other processes (not when the
  // lengths they came from failed a check).
  virtual std::vector<uint64_t> Count(const WindowCountsKey& key,
                                      const std::function<uint64_t(uint64_t)>& amount,
                                      const std::function<bool()>& shareable) const = 0;
};

// Counts in parallel ($STOKER_PLAN_THREADS, else every core) and keeps the counts of epochs of at
// least $STOKER_PLAN_CACHE_MIN_WINDOWS windows (default 256) in the cache root's plan/ (none with
// STOKER_CACHE_DIR=off). One shared instance.
std::shared_ptr<const WindowCounter> SharedWindowCounter();

}  // namespace stoker
