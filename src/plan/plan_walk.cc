#include "plan/plan_walk.h"

#include "plan/document_skips.h"

namespace stoker {

PlanPosition AdvanceSteps(const Plan& plan, PlanPosition pos, uint64_t steps) {
  while (steps > 0) {
    pos = plan.Normalize(pos);
    const uint64_t left = plan.steps_remaining(pos);
    if (steps < left) {
      pos.rows_consumed += steps * plan.global_batch_rows();
      return pos;
    }
    steps -= left;
    pos = {pos.epoch + 1, 0};
  }
  return plan.Normalize(pos);
}

Result<PlanPosition> WalkPlanSteps(const Plan& plan, PlanPosition start, uint64_t first_step,
                                   uint64_t steps,
                                   const std::function<Status(const WalkedPiece&)>& visit,
                                   const DocumentSkips* skips) {
  const PlanOptions& o = plan.options();
  const bool mixture = plan.num_datasets() > 1;
  const bool phases = mixture && !o.phases.empty();
  PlanPosition pos = plan.Normalize(start);
  WalkedPiece w;
  for (uint64_t s = 0; s < steps; ++s) {
    w.step = first_step + s;
    w.position = pos;
    for (uint32_t rank = 0; rank < o.world_size; ++rank) {
      STOKER_ASSIGN_OR_RETURN(Batch batch, plan.GetBatchAt(pos, rank));
      if (skips != nullptr) skips->Filter(&batch);
      w.epoch_step = batch.step;
      w.rank = rank;
      const uint64_t first_row = pos.rows_consumed + uint64_t{rank} * o.batch_size;
      for (size_t r = 0; r < batch.rows.size(); ++r) {
        const Row& row = batch.rows[r];
        w.row = static_cast<uint32_t>(r);
        w.repeated = row.repeated;
        // A mixture's epoch is whole global batches: none of its rows is a repeated one
        // (plan_provenance.cc does the same).
        if (mixture) w.dataset_epoch = plan.DatasetEpochOfRow(pos.epoch, first_row + r);
        if (phases) w.phase = plan.PhaseAt({pos.epoch, first_row + r});
        w.row_offset = 0;
        for (const RowPiece& piece : row.pieces) {
          w.piece = piece;
          STOKER_RETURN_IF_ERROR(visit(w));
          w.row_offset += PaddedLength(piece.length, o.pad_each_document_to);  // its room
        }
      }
    }
    pos = plan.Advance(pos);
  }
  return pos;
}

Result<std::map<uint64_t, PhaseTokenCounts>> CountPlanSteps(const Plan& plan, PlanPosition start,
                                                            uint64_t steps,
                                                            const DocumentSkips* skips) {
  std::map<uint64_t, PhaseTokenCounts> out;
  bool first = true;  // rows are counted at their first piece
  uint64_t last_step = 0;
  uint32_t last_rank = 0, last_row = 0;
  STOKER_ASSIGN_OR_RETURN(PlanPosition end, WalkPlanSteps(
                                                plan, start, 0, steps,
                                                [&](const WalkedPiece& w) {
                                                  PhaseTokenCounts& p = out[w.phase.value_or(0)];
                                                  if (p.datasets.empty())
                                                    p.datasets.resize(plan.num_datasets());
                                                  if (first || w.step != last_step ||
                                                      w.rank != last_rank || w.row != last_row) {
                                                    ++p.rows;
                                                    first = false;
                                                    last_step = w.step;
                                                    last_rank = w.rank;
                                                    last_row = w.row;
                                                  }
                                                  DatasetTokenCounts& c =
                                                      p.datasets[w.piece.dataset];
                                                  c.tokens += w.piece.length;
                                                  c.pieces += 1;
                                                  c.documents += w.piece.offset == 0 ? 1 : 0;
                                                  if (w.repeated)
                                                    c.repeated_tokens += w.piece.length;
                                                  return Status::OK();
                                                },
                                                skips));
  (void)end;
  return out;
}

}  // namespace stoker
