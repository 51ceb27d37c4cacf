// SlotRing: the loader's batch slots, allocated once — page-locked (cudaHostAlloc) when a CUDA
// device is usable and pinning is asked for, 4 KiB-aligned ordinary memory otherwise.
// Which slot is free is tracked by the engine, not here. Not thread-safe: one owner (the engine);
// slot memory itself is handed to one thread at a time by the engine's queues.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "stoker/status.h"

namespace stoker::loader {

class SlotRing {
 public:
  static Result<std::unique_ptr<SlotRing>> Open(int num_slots, size_t slot_bytes, bool pin);
  ~SlotRing();
  SlotRing(const SlotRing&) = delete;
  SlotRing& operator=(const SlotRing&) = delete;

  int num_slots() const { return static_cast<int>(slots_.size()); }
  size_t slot_bytes() const { return slot_bytes_; }
  bool pinned() const { return pinned_; }
  uint8_t* slot(int i) const { return slots_[i]; }

 private:
  SlotRing() = default;
  std::vector<uint8_t*> slots_;
  size_t slot_bytes_ = 0;
  bool pinned_ = false;
};

}  // namespace stoker::loader
