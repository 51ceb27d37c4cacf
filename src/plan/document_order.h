// DocumentOrder: the shuffled order of one dataset's documents in one epoch (position -> document).
// global: a keyed bijection over all documents; block: shards in a keyed order, documents shuffled
// within groups of `block_shards` consecutive shards of that order; none: source order.
// Immutable after construction. Thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "plan/keyed_permutation.h"
#include "stoker/plan.h"

namespace stoker::plan {

class DocumentOrder {
 public:
  // `shard_first_document` as in DatasetLengths (num_shards + 1 entries); `key` already depends on
  // the seed, the dataset and the epoch. The referenced vector must outlive the order.
  DocumentOrder(uint64_t num_documents, const std::vector<uint64_t>* shard_first_document,
                ShuffleMode mode, uint64_t block_shards, uint64_t key);

  uint64_t size() const { return num_documents_; }
  // The document at `position` (< size()).
  uint64_t DocumentAt(uint64_t position) const;

 private:
  uint64_t BlockDocumentAt(uint64_t position) const;
  // Index of the shuffled shard holding `position`.
  uint64_t ShuffledShardOf(uint64_t position) const;

  uint64_t num_documents_;
  const std::vector<uint64_t>* shard_first_document_;
  ShuffleMode mode_;
  uint64_t block_shards_;
  uint64_t key_;
  KeyedPermutation global_;
  std::vector<uint64_t> shard_order_;      // shuffled shard index -> source shard
  std::vector<uint64_t> position_prefix_;  // first position of each shuffled shard; + total
};

// Returns the shard holding `document` (binary search over shard_first_document).
uint64_t ShardOfDocument(const std::vector<uint64_t>& shard_first_document, uint64_t document);

}  // namespace stoker::plan
