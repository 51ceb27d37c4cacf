#include "loader/engine.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <limits>
#include <string>

#include "common/clock.h"
#include "storage/cancel.h"

namespace stoker::loader {
namespace {

void AtomicMax(std::atomic<uint64_t>& target, uint64_t value) {
  uint64_t cur = target.load(std::memory_order_relaxed);
  while (value > cur && !target.compare_exchange_weak(cur, value, std::memory_order_relaxed)) {
  }
}

}  // namespace

Engine::Engine(const EngineOptions& options, std::shared_ptr<const BatchPlanner> planner,
               std::vector<std::shared_ptr<const DocumentReader>> sources)
    : options_(options),
      layout_(BatchLayout::For(options.assembly)),
      planner_(std::move(planner)),
      owned_sources_(std::move(sources)),
      slot_info_(options.num_slots),
      free_slots_(options.num_slots),
      free_buffers_(std::max(options.device_buffers, 1)),
      slot_held_(options.num_slots, false),
      buffer_held_(std::max(options.device_buffers, 1), false) {
  for (const auto& s : owned_sources_) sources_.push_back(s.get());
}

Result<std::shared_ptr<Engine>> Engine::Open(
    const EngineOptions& options, std::shared_ptr<const BatchPlanner> planner,
    std::vector<std::shared_ptr<const DocumentReader>> sources) {
  if (options.num_workers < 1 || options.num_slots < 2) {
    return InvalidArgument("loader needs at least 1 worker and 2 ring slots");
  }
  std::shared_ptr<Engine> engine(new Engine(options, std::move(planner), std::move(sources)));
  STOKER_ASSIGN_OR_RETURN(
      engine->ring_,
      SlotRing::Open(options.num_slots, engine->layout_.total_bytes, options.pin_memory));
  // No usable device (no GPU, no driver, or built without CUDA) simply means host batches.
  if (options.device >= 0 && cuda::DeviceCount() > options.device) {
    STOKER_ASSIGN_OR_RETURN(engine->copier_,
                            cuda::DeviceCopier::Open(options.device, engine->layout_.total_bytes,
                                                     options.device_buffers));
  }
  return engine;
}

Engine::~Engine() { Stop(); }

uint8_t* Engine::device_buffer(int b) const {
  return copier_ == nullptr || b < 0 ? nullptr : static_cast<uint8_t*>(copier_->device_ptr(b));
}

void Engine::Start(const PlanPosition& pos) {
  Stop();
  stop_requests_.store(false);
  const PlanPosition start = planner_->Normalize(pos);
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = false;
    ready_.clear();
    staged_.clear();
    // Slots and buffers the consumer still holds come back through Release(); the rest are free.
    free_slots_.Reset();
    for (int i = 0; i < options_.num_slots; ++i) {
      if (!slot_held_[i]) free_slots_.Push(i);
    }
    free_buffers_.Reset();
    if (copier_ != nullptr) {
      for (int i = 0; i < copier_->num_buffers(); ++i) {
        if (!buffer_held_[i]) free_buffers_.Push(i);
      }
    }
  }
  {
    std::lock_guard<std::mutex> lock(dispatch_mu_);
    dispatch_pos_ = start;
    next_seq_ = 0;
  }
  copy_seq_ = 0;
  deliver_seq_ = 0;
  deliver_pos_ = start;
  consumer_epoch_ = start.epoch;
  counters_.batches = counters_.samples = counters_.tokens = counters_.real_tokens = 0;
  counters_.skipped = counters_.wait_last_ns = counters_.wait_total_ns = 0;
  counters_.wait_max_ns = counters_.read_ns = counters_.assemble_ns = counters_.copy_ns = 0;
  counters_.ready_samples_sum = 0;
  counters_.start_ns = SteadyNowNs();
  running_ = true;
  spawn_pending_ = false;
  SpawnWorkers(options_.persistent_workers ? std::numeric_limits<uint64_t>::max() : start.epoch);
  if (copier_ != nullptr) copier_thread_ = std::thread([this] { CopierLoop(); });
}

void Engine::SpawnWorkers(uint64_t epoch_limit) {
  {
    std::lock_guard<std::mutex> lock(dispatch_mu_);
    epoch_limit_ = epoch_limit;
  }
  for (int i = 0; i < options_.num_workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

void Engine::JoinWorkers() {
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

void Engine::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
  }
  stop_requests_.store(true);
  cv_.notify_all();
  free_slots_.Cancel();
  free_buffers_.Cancel();
  JoinWorkers();
  if (copier_thread_.joinable()) copier_thread_.join();
  running_ = false;
}

bool Engine::Dispatch(WorkItem* item) {
  std::lock_guard<std::mutex> lock(dispatch_mu_);
  // Checked before taking a slot so that a worker with nothing to do never hoards one.
  if (dispatch_pos_.epoch > epoch_limit_) return false;
  std::optional<int> slot = free_slots_.Pop();  // Cancel() wakes this
  if (!slot) return false;
  item->seq = next_seq_++;
  item->pos = dispatch_pos_;
  item->slot = *slot;
  dispatch_pos_ = planner_->Advance(dispatch_pos_);
  return true;
}

void Engine::WorkerLoop() {
  const storage::CancelScope cancel(&stop_requests_);
  // Reused from batch to batch: in the steady state a worker allocates nothing for assembly.
  Batch scratch;
  AssemblyScratch assembly_scratch;
  WorkItem item;
  while (Dispatch(&item)) {
    Fill(item, &scratch, &assembly_scratch);
    {
      std::lock_guard<std::mutex> lock(mu_);
      ready_[item.seq] = item.slot;
    }
    cv_.notify_all();
  }
}

void Engine::Fill(const WorkItem& item, Batch* scratch, AssemblyScratch* assembly_scratch) {
  SlotInfo& info = slot_info_[item.slot];
  info = SlotInfo{};
  info.position = item.pos;
  const int64_t t0 = SteadyNowNs();
  // A worker must never die silently: anything thrown becomes the error of its batch.
  try {
    Status s = planner_->BatchAt(item.pos, scratch);
    if (s.ok()) {
      info.step = scratch->step;
      info.figures = scratch->figures;
      s = AssembleBatch(options_.assembly, layout_, sources_, scratch->rows, ring_->slot(item.slot),
                        &info.assembly, assembly_scratch);
    }
    info.error = s;
  } catch (const std::exception& e) {
    info.error = Internal(std::string("loader worker: ") + e.what());
  } catch (...) {
    info.error = Internal("loader worker: unknown exception");
  }
  const uint64_t total_ns = SteadyNowNs() - t0;
  counters_.read_ns += info.assembly.read_ns;
  counters_.assemble_ns += total_ns - std::min(total_ns, info.assembly.read_ns);
}

void Engine::CopierLoop() {
  while (true) {
    int slot;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return cancelled_ || ready_.count(copy_seq_) > 0; });
      if (cancelled_) return;
      auto it = ready_.find(copy_seq_);
      slot = it->second;
      ready_.erase(it);
    }
    int buffer = -1;
    if (slot_info_[slot].error.ok()) {
      std::optional<int> b = free_buffers_.Pop();
      if (!b) return;  // cancelled; Start() rebuilds the free lists
      buffer = *b;
      Status s = copier_->CopyAsync(buffer, ring_->slot(slot), layout_.total_bytes);
      if (!s.ok()) slot_info_[slot].error = s.WithContext("copying a batch to the device");
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      staged_[copy_seq_] = {slot, buffer};
    }
    ++copy_seq_;
    cv_.notify_all();
  }
}

Result<std::optional<Delivered>> Engine::Next() {
  if (!running_) return Cancelled("the loader is stopped");
  if (deliver_pos_.epoch != consumer_epoch_) {
    consumer_epoch_ = deliver_pos_.epoch;
    if (!options_.persistent_workers) {
      // Non-persistent workers end with their epoch; the next epoch gets new threads when its
      // first batch is asked for (as torch starts them at iter()), so nothing of it is read, or
      // fetched from a remote store, while the consumer is between epochs.
      JoinWorkers();
      spawn_pending_ = true;
    }
    return std::optional<Delivered>();
  }
  if (spawn_pending_) {
    spawn_pending_ = false;
    SpawnWorkers(consumer_epoch_);
  }
  const int64_t t0 = SteadyNowNs();
  Delivered d;
  {
    std::unique_lock<std::mutex> lock(mu_);
    // Waiting while the consumer itself holds every slot (or device buffer) would never end.
    if (std::count(slot_held_.begin(), slot_held_.end(), true) == options_.num_slots ||
        (copier_ != nullptr &&
         std::count(buffer_held_.begin(), buffer_held_.end(), true) == copier_->num_buffers())) {
      return FailedPrecondition("every loader ring slot (" + std::to_string(options_.num_slots) +
                                ") or device buffer is held by unreleased batches; release one "
                                "before calling Next() again");
    }
    if (copier_ != nullptr) {
      cv_.wait(lock, [&] { return cancelled_ || staged_.count(deliver_seq_) > 0; });
      if (cancelled_) return Cancelled("the loader was stopped");
      auto it = staged_.find(deliver_seq_);
      d.slot = it->second.first;
      d.device_buffer = it->second.second;
      staged_.erase(it);
    } else {
      cv_.wait(lock, [&] { return cancelled_ || ready_.count(deliver_seq_) > 0; });
      if (cancelled_) return Cancelled("the loader was stopped");
      auto it = ready_.find(deliver_seq_);
      d.slot = it->second;
      ready_.erase(it);
    }
    counters_.ready_samples_sum += ready_.size() + staged_.size();
    slot_held_[d.slot] = true;
    if (d.device_buffer >= 0) buffer_held_[d.device_buffer] = true;
  }
  const uint64_t wait_ns = SteadyNowNs() - t0;
  ++deliver_seq_;
  d.info = slot_info_[d.slot];
  d.position = deliver_pos_;
  deliver_pos_ = planner_->Advance(deliver_pos_);
  d.next = deliver_pos_;
  if (!d.info.error.ok()) {
    Release(d.slot, d.device_buffer, nullptr, false);
    d.slot = d.device_buffer = -1;
    return std::optional<Delivered>(std::move(d));
  }
  const uint64_t cells = uint64_t(options_.assembly.batch_size) * options_.assembly.seq_len;
  counters_.wait_last_ns = wait_ns;
  counters_.wait_total_ns += wait_ns;
  AtomicMax(counters_.wait_max_ns, wait_ns);
  counters_.samples += options_.assembly.batch_size;
  counters_.tokens += cells;
  counters_.real_tokens += d.info.assembly.real_tokens;
  counters_.trained_tokens += d.info.assembly.trained_tokens;
  counters_.skipped += d.info.assembly.skipped_documents;
  ++counters_.batches;
  return std::optional<Delivered>(std::move(d));
}

void Engine::Release(int slot, int device_buffer, void* stream, bool stream_set) {
  if (device_buffer >= 0 && copier_ != nullptr) {
    // A failing CUDA call here means a broken context: the next copy reports it to the consumer,
    // and a release cannot report anything, so the results are deliberately dropped.
    if (stream_set) (void)copier_->RecordConsumed(device_buffer, stream);
    // The host slot may be refilled only once the copy that reads it has finished.
    (void)copier_->WaitCopied(device_buffer);
    float ms = copier_->LastCopyMs(device_buffer);
    if (ms > 0) counters_.copy_ns += static_cast<uint64_t>(ms * 1e6);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (device_buffer >= 0) {
    buffer_held_[device_buffer] = false;
    free_buffers_.Push(device_buffer);  // never blocks: at most num_buffers are ever out
  }
  if (slot >= 0) {
    slot_held_[slot] = false;
    free_slots_.Push(slot);  // never blocks; fails harmlessly while stopped (Start rebuilds)
  }
}

Status Engine::WaitCopied(int device_buffer) {
  if (copier_ == nullptr || device_buffer < 0) return Status::OK();
  return copier_->WaitCopied(device_buffer);
}

Status Engine::StreamWaitCopied(int device_buffer, void* stream) {
  if (copier_ == nullptr || device_buffer < 0) return Status::OK();
  return copier_->StreamWaitCopied(device_buffer, stream);
}

std::pair<int, int> Engine::Occupancy() const {
  std::lock_guard<std::mutex> lock(mu_);
  int free = static_cast<int>(free_slots_.size());
  return {static_cast<int>(ready_.size() + staged_.size()), options_.num_slots - free};
}

}  // namespace stoker::loader
