// Provenance: which documents fill each row of a step — for each piece its dataset (source path),
// shard, record index within the shard, record key where the format has one, and the token range
// taken from the document (docs/provenance.md). A user chasing a loss spike at step 81,234 asks
// `stoker explain --step 81234 --rank R`, Loader::Explain, or reads `batch["provenance"]`.
// Plain values; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stoker/plan.h"

namespace stoker {

struct PieceProvenance {
  uint32_t dataset = 0;            // index among the loader's (plan's) datasets
  std::string source;              // the dataset's path (a stream: the input file)
  uint64_t document = 0;           // indexed: the document's index in the dataset (the plan's id)
  uint64_t shard = 0;              // the shard within the dataset (a stream: its shard number)
  std::string shard_path;          // the shard's file (a Megatron prefix for stoker shards)
  uint64_t record = 0;             // the document's index among its shard's records
  std::optional<std::string> key;  // the record's key, where the format has one
  std::optional<uint64_t> byte_offset;  // a stream: the record's line in the (decompressed) file
  // A stream: the epoch whose shard dealing the document came from (the step's epoch, or the next
  // one where a rank's stream ran short; docs/streaming.md).
  std::optional<uint64_t> stream_epoch;
  // Indexed, with several datasets: the epoch of this dataset's own order the piece comes from
  // (a small dataset upsampled x4 is in its epoch 3 while the mixture is in its epoch 0).
  std::optional<uint64_t> dataset_epoch;
  // With a mixture schedule: the phase (index into PlanOptions::phases) of the piece's row.
  std::optional<uint64_t> phase;
  uint64_t offset = 0;      // first token taken from the document
  uint64_t length = 0;      // tokens taken: [offset, offset + length) of the document
  uint64_t row_offset = 0;  // where in the row the piece's first token lies
};

struct RowProvenance {
  std::vector<PieceProvenance> pieces;  // in row order; the rest of the row is padding
  bool repeated = false;                // remainder=pad took it from the next epoch
};

struct StepProvenance {
  PlanPosition position;  // where the step starts (global rows, all ranks)
  uint64_t step = 0;
  uint32_t rank = 0;
  std::vector<RowProvenance> rows;
  // {"epoch":..,"rows_consumed":..,"step":..,"rank":..,"rows":[{"repeated":..,"pieces":[{..}]}]}
  std::string ToJson() const;
};

}  // namespace stoker
