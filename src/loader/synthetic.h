// SyntheticBatch: the "remove the data pipeline" experiment — one batch built once at open (and
// copied once to the device, if any) and handed out forever with no reading, assembling or copying
// per step. Release is a no-op. Thread-safe.
#pragma once

#include <memory>
#include <vector>

#include "cuda/copier.h"
#include "loader/batch_layout.h"
#include "loader/batch_owner.h"
#include "loader/fixed_batch_planner.h"
#include "loader/slot_ring.h"

namespace stoker::loader {

class SyntheticBatch final : public BatchOwner {
 public:
  // Rows of pseudo-random documents (lengths and ids drawn from `seed`) filling every row.
  static Result<std::shared_ptr<SyntheticBatch>> Open(const AssemblyOptions& options, uint64_t seed,
                                                      bool pin_memory, int device);

  void Release(int slot, int device_buffer, void* stream, bool stream_set) override {}
  Status WaitCopied(int device_buffer) override;
  Status StreamWaitCopied(int device_buffer, void* stream) override;

  const BatchLayout& layout() const { return layout_; }
  const AssemblyResult& assembly() const { return assembly_; }
  uint8_t* host() const { return ring_->slot(0); }
  uint8_t* device() const {
    return copier_ ? static_cast<uint8_t*>(copier_->device_ptr(0)) : nullptr;
  }
  bool pinned() const { return ring_->pinned(); }
  int device_index() const { return copier_ ? device_ : -1; }
  std::shared_ptr<const BatchPlanner> planner() const { return planner_; }

 private:
  BatchLayout layout_;
  AssemblyResult assembly_;
  std::unique_ptr<SlotRing> ring_;
  std::unique_ptr<cuda::DeviceCopier> copier_;
  std::shared_ptr<const BatchPlanner> planner_;
  int device_ = -1;
};

}  // namespace stoker::loader
