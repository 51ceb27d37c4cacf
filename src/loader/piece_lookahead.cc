#include "loader/piece_lookahead.h"

namespace stoker::loader {

PieceLookAhead::PieceLookAhead(std::vector<std::shared_ptr<PiecePrefetcher>> prefetchers,
                               std::vector<std::shared_ptr<const DocumentReader>> readers,
                               uint64_t window_steps)
    : prefetchers_(std::move(prefetchers)),
      readers_(std::move(readers)),
      window_steps_(window_steps) {
  for (const auto& p : prefetchers_) active_ = active_ || p != nullptr;
}

void PieceLookAhead::Restart(const Plan& plan, PlanPosition from, uint32_t rank) {
  if (!active_) return;
  for (const auto& p : prefetchers_) {
    if (p != nullptr) p->Clear();
  }
  next_ = from;
  at_end_ = false;
  scheduled_ = 0;
  delivered_ = 0;
  Fill(plan, rank);
}

void PieceLookAhead::Delivered(const Plan& plan, uint32_t rank) {
  if (!active_) return;
  ++delivered_;
  if (scheduled_ < delivered_ + window_steps_ / 2) Fill(plan, rank);
}

void PieceLookAhead::Shutdown() {
  for (const auto& p : prefetchers_) {
    if (p != nullptr) p->Shutdown();
  }
}

void PieceLookAhead::Fill(const Plan& plan, uint32_t rank) {
  std::vector<std::vector<PieceFetch>> pieces(prefetchers_.size());
  while (!at_end_ && scheduled_ < delivered_ + window_steps_) {
    Result<Batch> batch = plan.GetBatchAt(next_, rank);
    if (!batch.ok()) {  // the end of the plan
      at_end_ = true;
      break;
    }
    for (const Row& row : batch->rows) {
      for (const RowPiece& p : row.pieces) {
        if (p.dataset >= prefetchers_.size() || prefetchers_[p.dataset] == nullptr) continue;
        const std::optional<uint64_t> length = readers_[p.dataset]->FindDocumentLength(p.document);
        if (!length || p.offset + p.length > *length) continue;  // the worker reports it
        const uint64_t count = p.length + (p.offset + p.length < *length ? 1 : 0);
        pieces[p.dataset].push_back({p.document, p.offset, count, scheduled_});
      }
    }
    next_ = plan.Advance(next_);
    ++scheduled_;
  }
  for (size_t d = 0; d < prefetchers_.size(); ++d) {
    if (prefetchers_[d] != nullptr) prefetchers_[d]->Add(pieces[d]);
  }
}

}  // namespace stoker::loader
