// LimitLongDocuments (stoker/plan.h): drop or truncate the documents longer than seq_len.
#include <algorithm>

#include "stoker/plan.h"

namespace stoker {

Result<DatasetLengths> LimitLongDocuments(const DatasetLengths& lengths, LongDocuments policy,
                                          uint64_t seq_len, LongDocumentCounts* counts) {
  if (policy != LongDocuments::kDrop && policy != LongDocuments::kTruncate) {
    return InvalidArgument("LimitLongDocuments: the policy must be drop or truncate");
  }
  if (seq_len == 0) return InvalidArgument("LimitLongDocuments: seq_len must be positive");
  DatasetLengths out;
  out.name = lengths.name;
  out.shard_first_document = lengths.shard_first_document;
  const uint64_t n = lengths.num_documents();
  out.document_lengths.resize(n);
  LongDocumentCounts c;
  for (uint64_t doc = 0; doc < n; ++doc) {
    uint64_t len = lengths.length(doc);
    if (len > seq_len) {
      if (policy == LongDocuments::kDrop) {
        len = 0;
        ++c.dropped;
      } else {
        len = seq_len;
        ++c.truncated;
      }
    }
    out.document_lengths[doc] = len;
  }
  STOKER_RETURN_IF_ERROR(lengths.status());
  if (counts != nullptr) *counts = c;
  return out;
}

}  // namespace stoker
