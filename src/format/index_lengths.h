// DatasetLengths read in place from a stoker length index (docs/plan.md, "Scale"): the mapped
// array, its header's totals, its shard boundaries and its chunk verifier, in one place for the
// plan, its tests and the benchmarks.
// Free function; thread-safe.
#pragma once

#include <memory>
#include <string>

#include "format/length_index.h"
#include "stoker/dataset_lengths.h"

namespace stoker {

// Lengths named `name` that read `index` in place (no copy; the result keeps it mapped).
inline DatasetLengths LengthsFromIndex(const std::shared_ptr<const LengthIndex>& index,
                                       std::string name) {
  DatasetLengths out;
  out.name = std::move(name);
  const LengthIndexHeader& h = index->header();
  out.shard_first_document.resize(h.num_shards + 1);
  for (uint64_t s = 0; s <= h.num_shards; ++s) {
    out.shard_first_document[s] = index->shard_first_document(s);
  }
  out.mapped = {reinterpret_cast<const uint8_t*>(index->lengths()), h.num_documents,
                MappedLengths::Element::kUint32, index, index->chunk_verifier()};
  out.totals = LengthTotals{h.total_tokens, h.nonempty_documents, h.length_hash, {}, {}};
  return out;
}

}  // namespace stoker
