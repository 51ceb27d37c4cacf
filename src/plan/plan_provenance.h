// ProvenanceMap: the provenance (stoker/provenance.h) of an indexed plan's rows; it maps a
// (dataset, document) to (source, shard, record). PlanBatchPlanner::Explain (so Loader::Explain
// and `stoker explain`) uses it; the streaming path builds the same StepProvenance from its rows
// (stream/stream_provenance.h).
// Thread-safe: ProvenanceMap is immutable after construction; the rest are plain values.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stoker/plan.h"
#include "stoker/provenance.h"
#include "stoker/token_source.h"

namespace stoker {

class DocumentSkips;  // plan/document_skips.h

// The shards of each dataset of an indexed plan, for ProvenanceMap.
struct ProvenanceDataset {
  std::string path;
  std::vector<uint64_t> shard_first_document;  // num_shards + 1 entries, as TokenSource gives
  std::vector<std::string> shard_paths;        // one per shard
  // The shard boundaries and names of `source` (a stoker dataset's shard prefixes; the source's
  // own path for single-file formats).
  static ProvenanceDataset FromSource(const TokenSource& source, const std::string& path = "");
};

class ProvenanceMap {
 public:
  explicit ProvenanceMap(std::vector<ProvenanceDataset> datasets)
      : datasets_(std::move(datasets)) {}

  // The map of a plan's datasets: `sources` in plan order, labelled by `paths` (a source's own
  // path where a label is missing or empty).
  static ProvenanceMap ForSources(const std::vector<std::shared_ptr<const TokenSource>>& sources,
                                  const std::vector<std::string>& paths);

  // The provenance of each row of `batch` (a Batch of a plan over these datasets, in order).
  // kInvalidArgument for a piece whose dataset or document is not in the map. `pad_to`: the
  // plan's pad_each_document_to (each piece then takes its padded room in the row).
  Result<StepProvenance> Explain(const Batch& batch, uint64_t pad_to = 0) const;
  // The provenance of `rank`'s step of `plan` (over these datasets) that starts at `pos`, less
  // the pieces of documents `skips` quarantines (null: none) and the rows `steps` skips
  // (EmptySkippedRows, state_skips.h; null: none).
  Result<StepProvenance> ExplainStep(const Plan& plan, const PlanPosition& pos, uint32_t rank,
                                     const DocumentSkips* skips = nullptr,
                                     const std::vector<SkipRange>* steps = nullptr) const;

 private:
  Result<PieceProvenance> Locate(const RowPiece& piece) const;
  std::vector<ProvenanceDataset> datasets_;
};

}  // namespace stoker
