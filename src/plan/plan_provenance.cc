#include "plan/plan_provenance.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "plan/plan_batch_planner.h"

namespace stoker {

std::string StepProvenance::ToJson() const {
  nlohmann::ordered_json rows_json = nlohmann::ordered_json::array();
  for (const RowProvenance& row : rows) {
    nlohmann::ordered_json pieces = nlohmann::ordered_json::array();
    for (const PieceProvenance& p : row.pieces) {
      nlohmann::ordered_json j;
      j["dataset"] = p.dataset;
      j["source"] = p.source;
      j["document"] = p.document;
      j["shard"] = p.shard;
      j["shard_path"] = p.shard_path;
      j["record"] = p.record;
      j["key"] = p.key ? nlohmann::ordered_json(*p.key) : nlohmann::ordered_json(nullptr);
      if (p.byte_offset) j["byte_offset"] = *p.byte_offset;
      if (p.stream_epoch) j["stream_epoch"] = *p.stream_epoch;
      if (p.dataset_epoch) j["dataset_epoch"] = *p.dataset_epoch;
      if (p.phase) j["phase"] = *p.phase;
      j["offset"] = p.offset;
      j["length"] = p.length;
      j["row_offset"] = p.row_offset;
      pieces.push_back(std::move(j));
    }
    rows_json.push_back({{"repeated", row.repeated}, {"pieces", std::move(pieces)}});
  }
  nlohmann::ordered_json out;
  out["epoch"] = position.epoch;
  out["rows_consumed"] = position.rows_consumed;
  out["step"] = step;
  out["rank"] = rank;
  out["rows"] = std::move(rows_json);
  return out.dump();
}

ProvenanceDataset ProvenanceDataset::FromSource(const TokenSource& source,
                                                const std::string& path) {
  ProvenanceDataset d;
  d.path = path.empty() ? source.path() : path;
  const uint64_t shards = source.num_shards();
  for (uint64_t s = 0; s <= shards; ++s) {
    d.shard_first_document.push_back(source.shard_first_document(s));
    if (s < shards) d.shard_paths.push_back(source.shard_path(s));
  }
  return d;
}

Result<PieceProvenance> ProvenanceMap::Locate(const RowPiece& piece) const {
  if (piece.dataset >= datasets_.size()) {
    return InvalidArgument("provenance: dataset " + std::to_string(piece.dataset) +
                           " is not one of the " + std::to_string(datasets_.size()) + " datasets");
  }
  const ProvenanceDataset& d = datasets_[piece.dataset];
  const std::vector<uint64_t>& first = d.shard_first_document;
  if (first.size() < 2 || piece.document >= first.back()) {
    return InvalidArgument("provenance: document " + std::to_string(piece.document) +
                           " is past the end of " + d.path);
  }
  // The last shard whose first document is <= the document (empty shards are skipped over).
  const uint64_t shard =
      static_cast<uint64_t>(std::upper_bound(first.begin(), first.end(), piece.document) -
                            first.begin()) -
      1;
  PieceProvenance p;
  p.dataset = piece.dataset;
  p.source = d.path;
  p.document = piece.document;
  p.shard = shard;
  p.shard_path = shard < d.shard_paths.size() ? d.shard_paths[shard] : d.path;
  p.record = piece.document - first[shard];
  p.offset = piece.offset;
  p.length = piece.length;
  return p;
}

Result<StepProvenance> ProvenanceMap::Explain(const Batch& batch, uint64_t pad_to) const {
  StepProvenance out;
  out.position = batch.position;
  out.step = batch.step;
  out.rank = batch.rank;
  for (const Row& row : batch.rows) {
    RowProvenance r;
    r.repeated = row.repeated;
    uint64_t at = 0;
    for (const RowPiece& piece : row.pieces) {
      STOKER_ASSIGN_OR_RETURN(PieceProvenance p, Locate(piece));
      p.row_offset = at;
      at += PaddedLength(piece.length, pad_to);
      r.pieces.push_back(std::move(p));
    }
    out.rows.push_back(std::move(r));
  }
  return out;
}

Result<StepProvenance> ProvenanceMap::ExplainStep(const Plan& plan, const PlanPosition& pos,
                                                  uint32_t rank, const DocumentSkips* skips,
                                                  const std::vector<SkipRange>* steps) const {
  STOKER_ASSIGN_OR_RETURN(Batch batch, plan.GetBatchAt(pos, rank));
  if (steps != nullptr) EmptySkippedRows(plan, *steps, &batch);
  if (skips != nullptr) skips->Filter(&batch);
  STOKER_ASSIGN_OR_RETURN(StepProvenance out, Explain(batch, plan.options().pad_each_document_to));
  if (plan.num_datasets() > 1) {
    // Each row's dataset epoch and phase. A mixture's epoch is whole global batches, so no row of
    // a mixture is a repeated one taken from the next epoch (docs/plan.md, "Mixtures").
    const bool phases = !plan.options().phases.empty();
    const uint64_t first = pos.rows_consumed + uint64_t{rank} * plan.options().batch_size;
    for (size_t i = 0; i < out.rows.size(); ++i) {
      const uint64_t e = plan.DatasetEpochOfRow(pos.epoch, first + i);
      const uint64_t phase = phases ? plan.PhaseAt({pos.epoch, first + i}) : 0;
      for (PieceProvenance& p : out.rows[i].pieces) {
        p.dataset_epoch = e;
        if (phases) p.phase = phase;
      }
    }
  }
  return out;
}

ProvenanceMap ProvenanceMap::ForSources(
    const std::vector<std::shared_ptr<const TokenSource>>& sources,
    const std::vector<std::string>& paths) {
  std::vector<ProvenanceDataset> datasets;
  for (size_t i = 0; i < sources.size(); ++i) {
    datasets.push_back(
        ProvenanceDataset::FromSource(*sources[i], i < paths.size() ? paths[i] : ""));
  }
  return ProvenanceMap(std::move(datasets));
}

Result<StepProvenance> PlanBatchPlanner::Explain(const PlanPosition& pos) const {
  if (sources_.empty()) return BatchPlanner::Explain(pos);
  std::call_once(provenance_once_, [this] {
    provenance_ = std::make_unique<ProvenanceMap>(ProvenanceMap::ForSources(sources_, paths_));
  });
  const std::shared_ptr<const DocumentSkips> skips = this->skips();
  const std::shared_ptr<const StateEdits> edits = this->edits();
  return provenance_->ExplainStep(*plan_, pos, rank_, skips.get(),
                                  edits != nullptr ? &edits->skips : nullptr);
}

}  // namespace stoker
