#include "loader/slot_ring.h"

#include <cstdlib>
#include <string>

#include "cuda/copier.h"

namespace stoker::loader {
namespace {
constexpr size_t kPageBytes = 4096;
}

Result<std::unique_ptr<SlotRing>> SlotRing::Open(int num_slots, size_t slot_bytes, bool pin) {
  std::unique_ptr<SlotRing> ring(new SlotRing());
  ring->slot_bytes_ = (slot_bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
  // One allocation per slot: a single huge pinned block can fail where several smaller succeed.
  ring->pinned_ = pin && cuda::DeviceCount() > 0;
  for (int i = 0; i < num_slots; ++i) {
    void* p = nullptr;
    if (ring->pinned_) {
      Result<void*> r = cuda::AllocPinned(ring->slot_bytes_);
      if (!r.ok()) return r.status().WithContext("allocating the loader's pinned ring");
      p = *r;
    } else {
      p = std::aligned_alloc(kPageBytes, ring->slot_bytes_);
      if (p == nullptr) {
        return IOError("out of memory allocating a loader ring slot of " +
                       std::to_string(ring->slot_bytes_) + " bytes");
      }
    }
    // Not pre-touched: the first fill of each slot takes its page faults on a worker, in
    // parallel, which keeps the time to the first batch independent of the ring size.
    ring->slots_.push_back(static_cast<uint8_t*>(p));
  }
  return ring;
}

SlotRing::~SlotRing() {
  for (uint8_t* p : slots_) {
    if (pinned_) {
      cuda::FreePinned(p);
    } else {
      std::free(p);
    }
  }
}

}  // namespace stoker::loader
