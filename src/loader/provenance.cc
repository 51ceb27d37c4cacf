#include "loader/provenance.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "format/stoker_dataset.h"

namespace stoker::loader {

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
  const auto* ds = dynamic_cast<const StokerDataset*>(&source);
  for (uint64_t s = 0; s <= shards; ++s) {
    d.shard_first_document.push_back(source.shard_first_document(s));
    if (s < shards) d.shard_paths.push_back(ds != nullptr ? ds->shard_prefix(s) : source.path());
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

Result<StepProvenance> ProvenanceMap::Explain(const Batch& batch) const {
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
      at += piece.length;
      r.pieces.push_back(std::move(p));
    }
    out.rows.push_back(std::move(r));
  }
  return out;
}

}  // namespace stoker::loader
