// Feeds each PiecePrefetcher (piece_prefetcher.h) the pieces of the steps ahead of delivery, in
// plan order, exactly as the assembler will read them (a piece that ends inside its document
// also reads the token after it: batch_layout.cc). It keeps `window_steps` steps scheduled ahead
// of the last delivered one and tops up when half of them are delivered; Restart follows a
// Restore (or the open) to a new position and forgets what was fetched for the old one.
// Not thread-safe: the Loader's consumer thread (Open, Next, Restore).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "loader/piece_prefetcher.h"
#include "stoker/document_reader.h"
#include "stoker/plan.h"

namespace stoker::loader {

class PieceLookAhead {
 public:
  // Per dataset of the plan: its prefetcher (null where the dataset is not read by request) and
  // the reader the engine reads it through (for document lengths).
  PieceLookAhead(std::vector<std::shared_ptr<PiecePrefetcher>> prefetchers,
                 std::vector<std::shared_ptr<const DocumentReader>> readers,
                 uint64_t window_steps = 128);

  // Whether any dataset is read ahead.
  bool active() const { return active_; }
  // Forgets the pieces queued and fetched, and schedules the steps from `from`.
  void Restart(const Plan& plan, PlanPosition from, uint32_t rank);
  // One more step was delivered: tops the window up once half of it is.
  void Delivered(const Plan& plan, uint32_t rank);
  // Stops every prefetcher (the loader is closing).
  void Shutdown();

 private:
  void Fill(const Plan& plan, uint32_t rank);

  std::vector<std::shared_ptr<PiecePrefetcher>> prefetchers_;
  std::vector<std::shared_ptr<const DocumentReader>> readers_;
  uint64_t window_steps_;
  bool active_ = false;
  PlanPosition next_;       // the first step not scheduled yet
  bool at_end_ = false;     // the plan has no step at next_
  uint64_t scheduled_ = 0;  // steps scheduled since Restart
  uint64_t delivered_ = 0;  // steps delivered since Restart
};

}  // namespace stoker::loader
