// Loader::Impl: the state behind a Loader, shared by the files of src/loader/ that open and run
// it (loader.cc, loader_open.cc). Private to src/loader/: nothing outside it includes this.
// Not thread-safe: the Loader's consumer thread, except where a member says otherwise.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "loader/engine.h"
#include "loader/piece_lookahead.h"
#include "loader/provenance.h"
#include "loader/stall_monitor.h"
#include "loader/synthetic.h"
#include "stoker/loader.h"

namespace stoker {

struct Loader::Impl {
  LoaderOptions options;
  std::shared_ptr<const Plan> plan;  // null for other planners and the synthetic source
  std::shared_ptr<const BatchPlanner> planner;
  std::shared_ptr<loader::Engine> engine;             // the pipeline, or
  std::shared_ptr<loader::SyntheticBatch> synthetic;  // the fixed batch
  PlanPosition synthetic_pos;
  loader::EngineCounters synthetic_counters;
  Status failed;  // sticky error under ErrorPolicy::kFail
  // The live stall monitor (engine loaders only). Set at Open, never replaced: Stats() reads it
  // from any thread.
  std::unique_ptr<loader::StallMonitor> monitor;
  int64_t last_return_ns = 0;  // when Next() last returned a batch; 0: none to measure from
  std::vector<std::shared_ptr<const DocumentReader>> readers;  // for their storage counters
  // Set by Loader::Open: the plan's token sources, for the look-ahead below.
  std::vector<std::shared_ptr<const TokenSource>> plan_sources;
  std::vector<std::string> plan_paths;  // the datasets' labels (LoaderDataset::path)
  LongDocumentCounts long_documents;    // what LoaderOptions::long_documents changed, all datasets
  // Explain's map of the plan's shards, made on its first call (thread-safe).
  mutable std::once_flag provenance_once;
  mutable std::unique_ptr<loader::ProvenanceMap> provenance;
  // Remote datasets behind a node-local cache: the shards of the next steps (LookAhead: at least
  // 64 steps, up to 1,024 or 256 MiB of shards) are scheduled at open, and again once half of
  // the steps covered (at least kRescheduleSteps) have been delivered.
  bool cached_sources = false;
  uint64_t delivered_since_schedule = 0;
  uint64_t scheduled_steps = 0;  // steps the last schedule covered
  // Datasets read by one request per piece: their pieces of the next steps, fetched ahead
  // (null for other planners and the synthetic source).
  std::unique_ptr<loader::PieceLookAhead> pieces;
};

namespace loader {
inline constexpr uint64_t kRescheduleSteps = 16;
}  // namespace loader

}  // namespace stoker
