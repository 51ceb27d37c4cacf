// The monotonic clock the loader's counters and timeouts are measured with.
#pragma once

#include <chrono>
#include <cstdint>

namespace stoker {

// Nanoseconds on std::chrono::steady_clock (monotonic; only differences are meaningful).
inline int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace stoker
