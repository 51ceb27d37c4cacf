// FaultInjection: a backend that misbehaves on purpose, the way remote storage does, so that the
// layers above can be tested against it (LevelDB's fault-injection Env, as a wrapper). Each read
// request (Stat, OpenForRead, ReadAt, List) draws from one seeded generator, so a run is
// reproducible for a given seed and request order. Faults: fail the Nth request, fail a fraction
// of them (as "503 SlowDown" or "connection reset": kUnavailable), return a short body (truncate),
// flip one byte of a body (corruption that only a checksum above can catch), add latency.
// Writers pass through untouched. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "storage/backend.h"

namespace stoker::storage {

struct FaultOptions {
  uint64_t seed = 1;
  uint64_t fail_nth = 0;         // fail request number N (1-based); 0: never
  double fail_fraction = 0;      // of requests failed with kUnavailable
  double truncate_fraction = 0;  // of ReadAt bodies cut short (half the bytes, at least one less)
  double flip_fraction = 0;      // of ReadAt bodies with one byte flipped
  uint32_t latency_ms = 0;       // added to every request
};

struct FaultCounts {
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> failed{0};
  std::atomic<uint64_t> truncated{0};
  std::atomic<uint64_t> flipped{0};
};

// `counts`, if not null, must outlive the backend and its readers.
std::unique_ptr<Backend> NewFaultBackend(std::unique_ptr<Backend> inner, FaultOptions options,
                                         FaultCounts* counts = nullptr);

}  // namespace stoker::storage
