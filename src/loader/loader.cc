#include "stoker/loader.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "common/clock.h"
#include "common/env.h"
#include "loader/context_parallel.h"
#include "loader/engine.h"
#include "loader/loader_impl.h"
#include "loader/stall_monitor.h"
#include "loader/synthetic.h"

namespace stoker {

using loader::AssemblyOptions;
using loader::Engine;
using loader::EngineCounters;

namespace {

AssemblyOptions ToAssembly(const LoaderOptions& o) {
  AssemblyOptions a;
  a.batch_size = static_cast<int>(o.batch_size);
  a.seq_len = static_cast<int>(o.seq_len);
  a.dtype = o.token_dtype;
  a.cross_document_targets = o.cross_document_targets;
  a.attention_mask = o.attention_mask;
  a.position_ids = o.position_ids;
  a.segment_ids = o.segment_ids;
  a.seq_idx = o.seq_idx;
  a.pad_each_document_to = static_cast<int>(o.pad_each_document_to);
  a.max_documents_per_row = static_cast<int>(o.max_documents_per_row);
  a.cp_size = static_cast<int>(o.cp_size);
  a.cp_rank = static_cast<int>(o.cp_rank);
  a.cp_zigzag = o.cp_layout != "contiguous";
  a.flex.block_size = static_cast<int>(o.flex_block_size);
  a.flex.kind = o.flex_mask_kind == "sliding_window" ? loader::FlexMaskKind::kSlidingWindow
                                                     : loader::FlexMaskKind::kCausal;
  a.flex.window = static_cast<int>(o.flex_window);
  a.skip_bad_documents = o.on_error == ErrorPolicy::kSkip;
  a.pad_token_id = o.pad_token_id;
  return a;
}

LoaderStats StatsFrom(const EngineCounters& c) {
  LoaderStats s;
  s.batches = c.batches;
  s.samples = c.samples;
  s.tokens = c.tokens;
  s.real_tokens = c.real_tokens;
  s.trained_tokens = c.trained_tokens;
  s.skipped_documents = c.skipped;
  s.elapsed_s = (SteadyNowNs() - c.start_ns) * 1e-9;
  if (s.elapsed_s > 0) {
    s.tokens_per_s = s.tokens / s.elapsed_s;
    s.samples_per_s = s.samples / s.elapsed_s;
  }
  s.wait_last_ms = c.wait_last_ns * 1e-6;
  s.wait_total_ms = c.wait_total_ns * 1e-6;
  s.wait_max_ms = c.wait_max_ns * 1e-6;
  s.read_s = c.read_ns * 1e-9;
  s.assemble_s = c.assemble_ns * 1e-9;
  s.copy_s = c.copy_ns * 1e-9;
  if (s.batches > 0) s.mean_slots_ready = static_cast<double>(c.ready_samples_sum) / s.batches;
  return s;
}

std::unique_ptr<loader::StallMonitor> MakeMonitor(const LoaderOptions& o) {
  loader::StallMonitorOptions mo;
  if (!o.monitor_warnings) {
    mo.sink = [](const std::string&) {};
  } else if (o.monitor_sink) {
    mo.sink = o.monitor_sink;
  }
  return std::make_unique<loader::StallMonitor>(std::move(mo));
}

// What the delivered batch cost the pipeline at full parallelism, in seconds. Its own read time
// is known; assembly and copy are taken as the mean per batch so far. Per-batch cost, not the
// work done between two Next() calls: while the ring fills, workers are busy whatever the
// loader's headroom, and that would read as a ratio of about 1.
double ProduceSeconds(const Engine& e, const loader::Delivered& d) {
  const EngineCounters& c = e.counters();
  const uint64_t produced = c.batches + static_cast<uint64_t>(e.Occupancy().first);
  const double assemble_ns = static_cast<double>(c.assemble_ns) / std::max<uint64_t>(1, produced);
  const double copy_ns = static_cast<double>(c.copy_ns) / std::max<uint64_t>(1, c.batches);
  const double worker_ns =
      (d.info.assembly.read_ns + assemble_ns) / std::max(1, e.options().num_workers);
  return std::max(worker_ns, copy_ns) * 1e-9;
}

}  // namespace

int DefaultNumWorkers() { return DefaultThreadsPerRank(); }

Status ValidateLoaderOptions(const LoaderOptions& o) {
  if (o.batch_size < 1 || o.seq_len < 1) {
    return InvalidArgument("loader: batch_size and seq_len must be at least 1");
  }
  // cu_seqlens is int32 over the flattened batch.
  if (o.batch_size * o.seq_len >= static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    return InvalidArgument("loader: batch_size * seq_len must stay below 2^31 (int32 cu_seqlens)");
  }
  if (o.token_dtype != TokenDType::kInt32 && o.token_dtype != TokenDType::kInt64) {
    return InvalidArgument("loader: token dtype must be int32 or int64");
  }
  if (o.num_workers < 0 || o.prefetch_factor < 1) {
    return InvalidArgument("loader: num_workers must be >= 0 and prefetch_factor >= 1");
  }
  if (o.attention_mask && !o.segment_ids) {
    return InvalidArgument("loader: attention_mask is built from segment_ids; keep segment_ids on");
  }
  if (o.device_buffers < 1 || o.device_buffers > 8) {
    return InvalidArgument("loader: device_buffers must be 1..8");
  }
  if (!o.tokens_per_step_schedule.empty() && o.tokens_per_step == 0) {
    return InvalidArgument("loader: the batch-size schedule '" + o.tokens_per_step_schedule +
                           "' (tokens_per_step_schedule: a mixture file's \"tokens_per_step\") "
                           "needs steps counted in tokens: give tokens_per_step too");
  }
  return loader::CheckContextParallel(o);
}

Loader::Loader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Loader::~Loader() {
  // Cancel and join now; the ring itself is freed when the last outstanding batch lets go.
  if (impl_->engine) {
    impl_->engine->Stop();
    impl_->planner->Stopped();
  }
}

Result<std::unique_ptr<Loader>> Loader::OpenWithPlanner(
    std::shared_ptr<const BatchPlanner> planner,
    std::vector<std::shared_ptr<const DocumentReader>> readers, const LoaderOptions& options,
    const PlanState* resume) {
  STOKER_RETURN_IF_ERROR(ValidateLoaderOptions(options));
  if (planner == nullptr) return InvalidArgument("loader: no planner given");
  for (const auto& r : readers) {
    if (r == nullptr) return InvalidArgument("loader: a null DocumentReader");
  }
  PlanPosition start;
  if (resume != nullptr) {
    STOKER_ASSIGN_OR_RETURN(start, planner->RestorePosition(*resume));
  }
  return OpenEngine(std::move(planner), std::move(readers), options, start);
}

Result<std::unique_ptr<Loader>> Loader::OpenEngine(
    std::shared_ptr<const BatchPlanner> planner,
    std::vector<std::shared_ptr<const DocumentReader>> readers, const LoaderOptions& options,
    const PlanPosition& start) {
  STOKER_RETURN_IF_ERROR(ValidateLoaderOptions(options));
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (impl->options.num_workers == 0) impl->options.num_workers = DefaultNumWorkers();
  loader::EngineOptions eo;
  eo.assembly = ToAssembly(options);
  // Chat data: labels only where the target token is trained, and a loss_mask beside them.
  eo.assembly.loss_mask =
      std::any_of(readers.begin(), readers.end(), [](const auto& r) { return r->has_loss_mask(); });
  eo.num_workers = impl->options.num_workers;
  eo.num_slots = options.prefetch_factor * eo.num_workers + 1;
  eo.persistent_workers = options.persistent_workers;
  eo.pin_memory = options.pin_memory;
  eo.device = options.device;
  eo.device_buffers = options.device_buffers;
  impl->planner = planner;
  impl->monitor = MakeMonitor(options);
  impl->readers = readers;
  STOKER_ASSIGN_OR_RETURN(impl->engine, Engine::Open(eo, std::move(planner), std::move(readers)));
  impl->planner->Started(start);
  impl->engine->Start(start);
  return std::unique_ptr<Loader>(new Loader(std::move(impl)));
}

Result<std::unique_ptr<Loader>> Loader::OpenSynthetic(const LoaderOptions& options) {
  STOKER_RETURN_IF_ERROR(ValidateLoaderOptions(options));
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  STOKER_ASSIGN_OR_RETURN(impl->synthetic,
                          loader::SyntheticBatch::Open(ToAssembly(options), options.seed,
                                                       options.pin_memory, options.device));
  impl->planner = impl->synthetic->planner();
  impl->synthetic_counters.start_ns = SteadyNowNs();
  return std::unique_ptr<Loader>(new Loader(std::move(impl)));
}

Result<std::optional<LoaderBatch>> Loader::Next() {
  Impl& m = *impl_;
  if (!m.failed.ok()) return m.failed;
  LoaderBatch b;
  b.batch_size_ = m.options.batch_size;
  b.seq_len_ = m.options.seq_len / std::max<uint64_t>(1, m.options.cp_size);  // this CP share
  b.dtype_ = m.options.token_dtype;
  if (m.synthetic) {
    const loader::SyntheticBatch& s = *m.synthetic;
    b.owner_ = m.synthetic;
    b.slot_ = 0;
    b.device_buffer_ = s.device() ? 0 : -1;
    b.host_base_ = s.host();
    b.device_base_ = s.device();
    b.device_ = s.device_index();
    b.layout_ = &s.layout();
    b.epoch_ = m.synthetic_pos.epoch;
    b.step_ = m.synthetic_pos.rows_consumed / m.options.batch_size;
    b.max_seqlen_ = s.assembly().max_seqlen;
    b.num_cu_seqlens_ = s.assembly().num_cu_seqlens;
    b.real_tokens_ = s.assembly().real_tokens;
    b.trained_tokens_ = s.assembly().trained_tokens;
    m.synthetic_pos = m.planner->Advance(m.synthetic_pos);
    b.position_after_ = m.synthetic_pos;
    b.planner_ = m.planner;
    EngineCounters& c = m.synthetic_counters;
    ++c.batches;
    c.samples += m.options.batch_size;
    c.tokens += m.options.batch_size * m.options.seq_len;
    c.real_tokens += b.real_tokens_;
    c.trained_tokens += b.trained_tokens_;
    return std::optional<LoaderBatch>(std::move(b));
  }
  const int64_t entry_ns = SteadyNowNs();
  STOKER_ASSIGN_OR_RETURN(std::optional<loader::Delivered> d, m.engine->Next());
  if (!d) {
    // Whatever the consumer does between epochs (evaluation, checkpoints) is not a training step.
    m.last_return_ns = 0;
    return std::optional<LoaderBatch>();
  }
  if (!d->info.error.ok()) {
    m.failed =
        d->info.error.WithContext("loader: batch of epoch " + std::to_string(d->position.epoch) +
                                  " step " + std::to_string(d->info.step));
    m.engine->Stop();
    return m.failed;
  }
  b.owner_ = m.engine;
  b.slot_ = d->slot;
  b.device_buffer_ = d->device_buffer;
  b.host_base_ = m.engine->host_slot(d->slot);
  b.device_base_ = m.engine->device_buffer(d->device_buffer);
  b.device_ = b.device_base_ ? m.options.device : -1;
  b.layout_ = &m.engine->layout();
  b.epoch_ = d->position.epoch;
  b.step_ = d->info.step;
  b.max_seqlen_ = d->info.assembly.max_seqlen;
  b.num_cu_seqlens_ = d->info.assembly.num_cu_seqlens;
  b.real_tokens_ = d->info.assembly.real_tokens;
  b.trained_tokens_ = d->info.assembly.trained_tokens;
  b.skipped_documents_ = d->info.assembly.skipped_documents;
  b.source_counts_ = std::move(d->info.assembly.sources);
  b.step_figures_ = d->info.figures;
  b.position_after_ = d->next;
  b.planner_ = m.planner;
  const int64_t now_ns = SteadyNowNs();
  // The first batch after Open, Restore or an epoch's end has no consumer step before it.
  if (m.last_return_ns > 0) {
    m.monitor->Record((now_ns - entry_ns) * 1e-9, (entry_ns - m.last_return_ns) * 1e-9,
                      m.options.batch_size * m.options.seq_len, ProduceSeconds(*m.engine, *d));
  }
  m.last_return_ns = now_ns;
  m.planner->Delivered(d->next);
  return std::optional<LoaderBatch>(std::move(b));
}

PlanState Loader::State() const {
  if (impl_->synthetic) return impl_->planner->MakeState(impl_->synthetic_pos);
  return impl_->planner->MakeState(impl_->engine->deliver_position());
}

Status Loader::Restore(const PlanState& state) {
  // The workers stop first: one still planning a batch of the old position would run the planner
  // beside its restore (a stream planner would then replace the restored generator, elastic
  // state included, with a fresh one from the epoch's start). A refused state restarts them
  // where they were.
  std::optional<PlanPosition> before;
  if (!impl_->synthetic) {
    before = impl_->engine->deliver_position();
    impl_->engine->Stop();
  }
  Result<PlanPosition> restored = impl_->planner->RestorePosition(state);
  if (!restored.ok()) {
    if (before) impl_->engine->Start(*before);
    return restored.status();
  }
  const PlanPosition pos = *restored;
  impl_->failed = Status::OK();
  if (impl_->synthetic) {
    impl_->synthetic_pos = pos;
    return Status::OK();
  }
  impl_->last_return_ns = 0;
  impl_->planner->Started(pos);  // the look-ahead follows the restored position
  impl_->engine->Start(pos);
  return Status::OK();
}

LoaderStats Loader::Stats() const {
  if (impl_->synthetic) {
    LoaderStats s = StatsFrom(impl_->synthetic_counters);
    s.pinned = impl_->synthetic->pinned();
    s.device_batches = impl_->synthetic->device() != nullptr;
    s.ring_slots = 1;
    return s;
  }
  const Engine& e = *impl_->engine;
  LoaderStats s = StatsFrom(e.counters());
  s.num_workers = e.options().num_workers;
  const LongDocumentCounts long_documents = impl_->planner->LongDocuments();
  s.long_documents_dropped = long_documents.dropped + long_documents.untrained;
  s.long_documents_truncated = long_documents.truncated - long_documents.untrained;
  s.ring_slots = e.options().num_slots;
  std::tie(s.slots_ready, s.slots_in_use) = e.Occupancy();
  s.pinned = e.pinned();
  s.device_batches = e.has_device();
  const loader::StallWindow w = impl_->monitor->Window();
  s.monitor_batches = w.batches;
  s.monitor_stall_share = w.stall_share;
  s.monitor_consumed_tokens_per_s = w.consumed_tokens_per_s;
  s.monitor_deliverable_tokens_per_s = w.deliverable_tokens_per_s;
  s.monitor_ratio = w.ratio;
  s.monitor_warnings = impl_->monitor->warnings();
  s.monitor_warned = s.monitor_warnings > 0;
  for (const auto& reader : impl_->readers) s.storage += reader->storage_stats();
  return s;
}

const Plan* Loader::plan() const { return impl_->planner->plan(); }

const BatchPlanner& Loader::planner() const { return *impl_->planner; }

Result<StepProvenance> Loader::Explain(const PlanPosition& pos) const {
  if (impl_->synthetic) return Unimplemented("provenance: the synthetic loader has no documents");
  return impl_->planner->Explain(impl_->planner->Normalize(pos));
}
const LoaderOptions& Loader::options() const { return impl_->options; }

}  // namespace stoker
