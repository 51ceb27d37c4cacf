#include "stream/deal.h"

#include <algorithm>

namespace stoker::stream {
namespace {

// The record index (in the shard) of document `doc`: the documents before it plus the records
// before it that yield none.
uint64_t RecordOf(const StreamShard& shard, const ShardScan& scan, uint32_t s, uint64_t doc) {
  const std::vector<uint64_t>& skipped = scan.skipped[s];
  if (!shard.records) {  // JSONL: the skipped lines that start before the document's line
    const uint64_t at = scan.offsets[s][doc];
    return doc + (std::lower_bound(skipped.begin(), skipped.end(), at) - skipped.begin());
  }
  uint64_t k = 0;  // record shards: the skipped record indices below the document's
  while (k < skipped.size() && skipped[k] <= doc + k) ++k;
  return doc + k;
}

}  // namespace

bool CanCut(const StreamShard& shard, const ShardScan& scan, uint32_t s) {
  if (shard.records) return true;
  return shard.jsonl && scan.offsets[s].size() == scan.lengths[s].size();
}

ReadUnit DocumentRange(const StreamShard& shard, const ShardScan& scan, uint32_t s, uint64_t begin,
                       uint64_t end) {
  const uint64_t n = scan.lengths[s].size();
  ReadUnit u;
  u.shard = s;
  if (begin > 0 && begin < n) {
    u.record = RecordOf(shard, scan, s, begin);
    u.offset = shard.records ? 0 : scan.offsets[s][begin];
    u.docs = begin;
  }
  if (end < n) {
    u.end_record = RecordOf(shard, scan, s, end);
    u.end_docs = end;
  }
  return u;
}

void AppendUnitLengths(const ShardScan& scan, const ReadUnit& u, std::vector<uint32_t>* out) {
  AppendUnitValues(scan.lengths, u, out);
}

void AppendUnitValues(const std::vector<std::vector<uint32_t>>& per_shard, const ReadUnit& u,
                      std::vector<uint32_t>* out) {
  const std::vector<uint32_t>& l = per_shard[u.shard];
  const uint64_t begin = std::min<uint64_t>(u.docs, l.size());
  const uint64_t end = std::max(begin, std::min<uint64_t>(u.end_docs, l.size()));
  out->insert(out->end(), l.begin() + begin, l.begin() + end);
}

std::vector<std::vector<ReadUnit>> DealEpoch(const std::vector<StreamShard>& shards,
                                             const ShardScan* scan, uint64_t seed, uint64_t epoch,
                                             uint32_t world_size, PackMode pack) {
  const uint32_t W = std::max<uint32_t>(world_size, 1);
  std::vector<std::vector<ReadUnit>> out(W);
  if (scan == nullptr) {
    const std::vector<std::vector<uint32_t>> dealt = DealShards(shards, seed, epoch, W);
    for (uint32_t r = 0; r < W; ++r) out[r] = WholeShards(dealt[r]);
    return out;
  }
  // A document's weight: the rows it makes are about its tokens / seq_len (pad: one).
  auto weight = [pack](uint32_t len) -> uint64_t { return pack == PackMode::kPad ? 1 : len; };
  uint64_t total = 0;
  for (const std::vector<uint32_t>& l : scan->lengths) {
    for (uint32_t len : l) total += weight(len);
  }
  // Rank r's piece ends where the running weight reaches target(r).
  auto target = [&](uint32_t r) -> uint64_t {
    return static_cast<uint64_t>(static_cast<unsigned __int128>(total) * (r + 1) / W);
  };
  uint32_t r = 0;
  uint64_t cum = 0;
  for (uint32_t s : ShardOrder(shards.size(), seed, epoch)) {
    const std::vector<uint32_t>& len = scan->lengths[s];
    const uint64_t n = len.size();
    const bool cuttable = CanCut(shards[s], *scan, s);
    uint64_t i = 0;
    do {
      while (r + 1 < W && cum >= target(r)) ++r;
      if (r + 1 == W || !cuttable || n == 0) {  // the rest of the shard to rank r
        for (uint64_t j = i; j < n; ++j) cum += weight(len[j]);
        out[r].push_back(DocumentRange(shards[s], *scan, s, i, n));
        break;
      }
      const uint64_t t = target(r);
      uint64_t j = i, c = cum;
      while (j < n && c + weight(len[j]) <= t) c += weight(len[j++]);
      // The document across the target goes to the side that holds most of it.
      if (j < n && 2 * (t - c) > weight(len[j])) c += weight(len[j++]);
      if (j > i) out[r].push_back(DocumentRange(shards[s], *scan, s, i, j));
      cum = c;
      i = j;
      if (j < n) ++r;  // cut here: rank r is complete
    } while (i < n);
  }
  return out;
}

}  // namespace stoker::stream
