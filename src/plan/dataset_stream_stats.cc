// DatasetStream's statistics over a whole epoch: packing (real tokens, padding, splits) and shuffle
// locality. Both read every length once; they are for `stoker plan --stats`, not the hot path.
#include <unordered_set>

#include "plan/dataset_stream.h"

namespace stoker::plan {

PackingStats DatasetStream::ComputePackingStats(uint64_t epoch) const {
  const DatasetLengths& len = *lengths_;
  const uint64_t s = options_.seq_len;
  PackingStats st;
  st.rows = RowsInEpoch(epoch);
  st.documents = NonemptyDocuments();
  st.empty_documents = len.num_documents() - st.documents;
  if (options_.pack == PackMode::kConcat) {
    // A document is split when it crosses a multiple of seq_len in the concatenated stream.
    DocumentOrder order = MakeOrder(epoch);
    uint64_t start = 0;
    for (uint64_t p = 0; p < order.size(); ++p) {
      uint64_t l = len.length(order.DocumentAt(p));
      if (l > 0 && start / s != (start + l - 1) / s) ++st.documents_split;
      start += l;
    }
    st.real_tokens = num_tokens_;
  } else {
    for (uint64_t d = 0; d < len.num_documents(); ++d) {
      const uint64_t l = len.length(d);
      if (options_.pack == PackMode::kPad) {
        st.real_tokens += std::min(l, s);
        st.truncated_tokens += l > s ? l - s : 0;
      } else {
        st.real_tokens += l;
        st.documents_split += l > s;
      }
    }
  }
  st.padding_tokens = st.rows * s - st.real_tokens;
  return st;
}

ShuffleStats DatasetStream::ComputeShuffleStats(uint64_t epoch) const {
  constexpr uint64_t kWindow = 1000;
  const DatasetLengths& len = *lengths_;
  const std::vector<uint64_t>& shards = lengths_->shard_first_document;
  DocumentOrder order = MakeOrder(epoch);
  ShuffleStats st;
  double distance_sum = 0;
  uint64_t pairs = 0, windows = 0, shard_sum = 0;
  bool have_prev = false;
  uint64_t prev = 0;
  std::unordered_set<uint64_t> in_window;
  for (uint64_t p = 0; p < order.size(); ++p) {
    uint64_t d = order.DocumentAt(p);
    if (len.length(d) == 0) continue;  // never read, so it does not count for locality
    if (have_prev) {
      distance_sum += static_cast<double>(d > prev ? d - prev : prev - d);
      ++pairs;
    }
    have_prev = true;
    prev = d;
    in_window.insert(ShardOfDocument(shards, d));
    if (++st.documents % kWindow == 0) {
      shard_sum += in_window.size();
      ++windows;
      in_window.clear();
    }
  }
  if (!in_window.empty()) {
    shard_sum += in_window.size();
    ++windows;
  }
  st.mean_source_distance = pairs ? distance_sum / pairs : 0;
  st.mean_shards_per_window = windows ? static_cast<double>(shard_sum) / windows : 0;
  return st;
}

}  // namespace stoker::plan
