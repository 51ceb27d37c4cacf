#include "plan/document_order.h"

#include <algorithm>

namespace stoker::plan {

DocumentOrder::DocumentOrder(uint64_t num_documents,
                             const std::vector<uint64_t>* shard_first_document, ShuffleMode mode,
                             uint64_t block_shards, uint64_t key)
    : num_documents_(num_documents),
      shard_first_document_(shard_first_document),
      mode_(mode),
      block_shards_(std::max<uint64_t>(block_shards, 1)),
      key_(key),
      global_(mode == ShuffleMode::kGlobal ? num_documents : 0, key) {
  if (mode_ != ShuffleMode::kBlock) return;
  const uint64_t num_shards = shard_first_document_->size() - 1;
  KeyedPermutation shard_perm(num_shards, DeriveKey(key_, 0x5A4D));
  shard_order_.resize(num_shards);
  position_prefix_.resize(num_shards + 1);
  position_prefix_[0] = 0;
  for (uint64_t s = 0; s < num_shards; ++s) {
    uint64_t source = shard_perm.Apply(s);
    shard_order_[s] = source;
    uint64_t docs = (*shard_first_document_)[source + 1] - (*shard_first_document_)[source];
    position_prefix_[s + 1] = position_prefix_[s] + docs;
  }
}

uint64_t DocumentOrder::DocumentAt(uint64_t position) const {
  switch (mode_) {
    case ShuffleMode::kGlobal:
      return global_.Apply(position);
    case ShuffleMode::kBlock:
      return BlockDocumentAt(position);
    case ShuffleMode::kNone:
      break;
  }
  return position;
}

uint64_t DocumentOrder::ShuffledShardOf(uint64_t position) const {
  // The last shard starting at or before `position`: empty shards share a start and are skipped.
  auto it = std::upper_bound(position_prefix_.begin(), position_prefix_.end(), position);
  return static_cast<uint64_t>(it - position_prefix_.begin()) - 1;
}

uint64_t DocumentOrder::BlockDocumentAt(uint64_t position) const {
  const uint64_t num_shards = shard_order_.size();
  uint64_t group = ShuffledShardOf(position) / block_shards_;
  uint64_t lo = position_prefix_[group * block_shards_];
  uint64_t hi = position_prefix_[std::min((group + 1) * block_shards_, num_shards)];
  KeyedPermutation within(hi - lo, DeriveKey(key_, 0xB10C0000ULL + group));
  uint64_t shuffled = lo + within.Apply(position - lo);
  uint64_t s = ShuffledShardOf(shuffled);
  return (*shard_first_document_)[shard_order_[s]] + (shuffled - position_prefix_[s]);
}

uint64_t ShardOfDocument(const std::vector<uint64_t>& shard_first_document, uint64_t document) {
  auto it = std::upper_bound(shard_first_document.begin(), shard_first_document.end(), document);
  return static_cast<uint64_t>(it - shard_first_document.begin()) - 1;
}

}  // namespace stoker::plan
