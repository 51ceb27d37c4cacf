// The non-virtual and default parts of TokenSource (include/stoker/token_source.h).
#include "stoker/token_source.h"

#include <algorithm>

namespace stoker {

uint64_t TokenSource::ShardOf(uint64_t doc) const {
  // The last shard whose first document is <= doc (empty shards are skipped over).
  uint64_t lo = 0, hi = num_shards();
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (shard_first_document(mid) <= doc) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

Result<DatasetLengths> TokenSource::Lengths() const {
  DatasetLengths out;
  out.name = path();
  const uint64_t shards = num_shards();
  out.shard_first_document.resize(shards + 1);
  for (uint64_t s = 0; s <= shards; ++s) out.shard_first_document[s] = shard_first_document(s);
  const uint64_t n = num_documents();
  out.document_lengths.resize(n);
  DocumentLengths(0, n, out.document_lengths.data());
  return out;
}

}  // namespace stoker
