// Engine: the loader's fixed thread graph.
//
//   workers (num_workers threads)  free slot + next plan position -> assemble rows into the slot
//        | ready_ (seq -> slot)    reorder stage: batches leave in plan (sequence) order
//   copier (one thread, with a device)  cudaMemcpyAsync slot -> device buffer on a side stream
//        | staged_ (seq -> slot, buffer)
//   consumer (Next)                 returns slot + buffer; Release gives them back
//
// Free slots and free device buffers travel in BoundedQueues whose Cancel() wakes every waiter;
// shutdown is cancel -> join -> free. No lock is held across reads, plan lookups or CUDA calls.
// Thread-safe as documented per method; Next/Start/Stop: one consumer thread at a time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "common/thread_annotations.h"
#include "cuda/copier.h"
#include "loader/batch_layout.h"
#include "loader/batch_owner.h"
#include "loader/bounded_queue.h"
#include "loader/slot_ring.h"
#include "stoker/document_reader.h"
#include "stoker/planner.h"
#include "stoker/status.h"

namespace stoker::loader {

struct EngineOptions {
  AssemblyOptions assembly;
  int num_workers = 1;
  int num_slots = 3;
  bool persistent_workers = true;
  bool pin_memory = true;
  int device = -1;  // < 0: host batches
  int device_buffers = 2;
};

// What a slot holds once filled; written by its worker, read by the consumer after handoff.
struct SlotInfo {
  PlanPosition position;
  uint64_t step = 0;
  AssemblyResult assembly;
  std::optional<StepFigures> figures;  // steps counted in tokens
  Status error;
};

struct Delivered {
  int slot = -1;
  int device_buffer = -1;  // -1: host batch
  PlanPosition position;   // where this batch's step starts
  PlanPosition next;       // the position after it
  SlotInfo info;
};

struct EngineCounters {
  std::atomic<uint64_t> batches{0}, samples{0}, tokens{0}, real_tokens{0}, trained_tokens{0},
      skipped{0};
  std::atomic<uint64_t> wait_last_ns{0}, wait_total_ns{0}, wait_max_ns{0};
  std::atomic<uint64_t> read_ns{0}, assemble_ns{0}, copy_ns{0};
  std::atomic<uint64_t> ready_samples_sum{0};
  std::atomic<int64_t> start_ns{0};
};

class Engine final : public BatchOwner {
 public:
  // `sources` and `planner` must outlive the engine (the Loader shares ownership with it).
  static Result<std::shared_ptr<Engine>> Open(
      const EngineOptions& options, std::shared_ptr<const BatchPlanner> planner,
      std::vector<std::shared_ptr<const DocumentReader>> sources);
  ~Engine() override;

  // Drops every prefetched batch and starts producing from `pos` (normalized here). Consumer only.
  void Start(const PlanPosition& pos);
  // Cancels and joins every thread. Idempotent. Consumer only.
  void Stop();

  // Next batch in plan order, nullopt once at each epoch's end; kCancelled after Stop().
  // A batch whose assembly failed comes back with info.error set (the slot is already released).
  Result<std::optional<Delivered>> Next();
  // Returns a delivered batch's slot and device buffer. `stream` is the consumer's cudaStream_t if
  // `stream_set`. Thread-safe.
  void Release(int slot, int device_buffer, void* stream, bool stream_set) override;

  // Blocks until the copy into `device_buffer` has finished. Thread-safe for distinct buffers.
  Status WaitCopied(int device_buffer) override;
  Status StreamWaitCopied(int device_buffer, void* stream) override;

  const BatchLayout& layout() const { return layout_; }
  const EngineOptions& options() const { return options_; }
  uint8_t* host_slot(int slot) const { return ring_->slot(slot); }
  uint8_t* device_buffer(int b) const;
  bool pinned() const { return ring_->pinned(); }
  bool has_device() const { return copier_ != nullptr; }
  const EngineCounters& counters() const { return counters_; }
  // Filled-but-undelivered batches, and slots not free.
  std::pair<int, int> Occupancy() const;
  PlanPosition deliver_position() const { return deliver_pos_; }

 private:
  struct WorkItem {
    uint64_t seq;
    PlanPosition pos;
    int slot;
  };
  Engine(const EngineOptions& options, std::shared_ptr<const BatchPlanner> planner,
         std::vector<std::shared_ptr<const DocumentReader>> sources);
  bool Dispatch(WorkItem* item);
  void WorkerLoop();
  void Fill(const WorkItem& item, Batch* scratch, AssemblyScratch* assembly_scratch);
  void CopierLoop();
  void SpawnWorkers(uint64_t epoch_limit);
  void JoinWorkers();

  const EngineOptions options_;
  const BatchLayout layout_;
  std::shared_ptr<const BatchPlanner> planner_;
  std::vector<std::shared_ptr<const DocumentReader>> owned_sources_;
  std::vector<const DocumentReader*> sources_;
  std::unique_ptr<SlotRing> ring_;
  std::unique_ptr<cuda::DeviceCopier> copier_;
  std::vector<SlotInfo> slot_info_;  // slot i: owned by whoever holds slot i

  BoundedQueue<int> free_slots_;
  BoundedQueue<int> free_buffers_;

  std::mutex dispatch_mu_;  // serializes taking (free slot, next position) together
  PlanPosition dispatch_pos_ STOKER_GUARDED_BY(dispatch_mu_);
  uint64_t next_seq_ STOKER_GUARDED_BY(dispatch_mu_) = 0;
  uint64_t epoch_limit_ STOKER_GUARDED_BY(dispatch_mu_) = 0;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool cancelled_ STOKER_GUARDED_BY(mu_) = false;
  // Set by Stop: the workers' storage requests (a shard download, a ranged GET) are aborted in
  // flight (storage/cancel.h), so that Stop does not wait out a stalled request.
  std::atomic<bool> stop_requests_{false};
  std::map<uint64_t, int> ready_ STOKER_GUARDED_BY(mu_);                   // seq -> slot
  std::map<uint64_t, std::pair<int, int>> staged_ STOKER_GUARDED_BY(mu_);  // seq -> slot, buffer
  std::vector<bool> slot_held_ STOKER_GUARDED_BY(mu_);                     // by the consumer
  std::vector<bool> buffer_held_ STOKER_GUARDED_BY(mu_);                   // by the consumer
  uint64_t copy_seq_ = 0;  // confined to the copier thread (reset while it is joined)

  // Consumer-confined state.
  std::vector<std::thread> workers_;
  std::thread copier_thread_;
  bool running_ = false;
  uint64_t deliver_seq_ = 0;
  PlanPosition deliver_pos_;
  uint64_t consumer_epoch_ = 0;
  bool spawn_pending_ = false;  // non-persistent: the next epoch's workers start at its first Next

  EngineCounters counters_;
};

}  // namespace stoker::loader
