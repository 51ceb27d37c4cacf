// Loader::Impl: the state behind a Loader, shared by the files of src/loader/ that open and run
// it (loader.cc, loader_open.cc). Private to src/loader/: nothing outside it includes this.
// Not thread-safe: the Loader's consumer thread, except where a member says otherwise.
#pragma once

#include <memory>
#include <vector>

#include "loader/engine.h"
#include "loader/stall_monitor.h"
#include "loader/synthetic.h"
#include "stoker/loader.h"

namespace stoker {

// The engine's state only: what a planner knows (its plan, sources, provenance, look-ahead)
// stays behind BatchPlanner (stoker/planner.h).
struct Loader::Impl {
  LoaderOptions options;
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
};

}  // namespace stoker
