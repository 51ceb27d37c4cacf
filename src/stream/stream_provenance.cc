#include "stream/stream_provenance.h"

namespace stoker::stream {

Result<StepProvenance> ExplainStreamStep(const StreamPlanner& planner, const PlanPosition& pos,
                                         uint32_t rank, uint64_t global_batch_rows) {
  STOKER_ASSIGN_OR_RETURN(std::vector<PackedRow> rows, planner.RowsAt(pos));
  StepProvenance out;
  out.position = pos;
  out.step = global_batch_rows > 0 ? pos.rows_consumed / global_batch_rows : 0;
  out.rank = rank;
  for (const PackedRow& row : rows) {
    RowProvenance r;
    uint64_t at = 0;
    for (const PackedPiece& piece : row) {
      PieceProvenance p;
      const std::shared_ptr<const std::vector<StreamShard>> shards =
          planner.ShardsOf(piece.stream_epoch);
      if (piece.ref.shard < shards->size()) {
        p.source = p.shard_path = (*shards)[piece.ref.shard].path;
      }
      p.shard = piece.ref.shard;
      p.record = piece.ref.record;
      p.document = piece.ref.record;
      p.byte_offset = piece.ref.offset;
      p.stream_epoch = piece.stream_epoch;
      p.offset = piece.offset;
      p.length = piece.length;
      p.row_offset = at;
      at += PaddedLength(piece.length, planner.pad_each_document_to());  // as the plan's
      r.pieces.push_back(std::move(p));
    }
    out.rows.push_back(std::move(r));
  }
  return out;
}

Result<StepProvenance> StreamPlanner::Explain(const PlanPosition& pos) const {
  return ExplainStreamStep(*this, pos, ctx_->config.rank, global_rows_);
}

}  // namespace stoker::stream
