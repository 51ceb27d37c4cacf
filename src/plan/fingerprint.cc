#include "plan/fingerprint.h"

#include <cstdio>
#include <cstring>

#include "plan/keyed_permutation.h"

namespace stoker::plan {
namespace {

class Hasher {
 public:
  void Add(uint64_t v) { h_ = Mix64(h_ ^ Mix64(v + ++n_)); }
  void AddDouble(double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    Add(bits);
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0x73746f6b65722d70ULL;  // "stoker-p"
  uint64_t n_ = 0;
};

}  // namespace

std::string ComputeFingerprint(const std::vector<PlanDataset>& datasets,
                               const PlanOptions& options) {
  Hasher h;
  h.Add(PlanState::kVersion);
  h.Add(datasets.size());
  for (const PlanDataset& ds : datasets) {
    const DatasetLengths& l = *ds.lengths;
    uint64_t tokens = 0;
    Hasher lengths;
    for (uint64_t len : l.document_lengths) {
      tokens += len;
      lengths.Add(len);
    }
    h.Add(l.document_lengths.size());
    h.Add(tokens);
    h.Add(lengths.value());
    h.Add(l.shard_first_document.size());
    for (uint64_t first : l.shard_first_document) h.Add(first);
    // Weights enter relative to their sum so "1:a 1:b" and "2:a 2:b" agree.
    double sum = 0;
    for (const PlanDataset& other : datasets) sum += other.weight;
    h.AddDouble(datasets.size() == 1 ? 1.0 : ds.weight / sum);
  }
  h.Add(options.seq_len);
  h.Add(options.seed);
  h.Add(static_cast<uint64_t>(options.shuffle));
  h.Add(options.shuffle == ShuffleMode::kBlock ? options.block_shards : 0);
  h.Add(static_cast<uint64_t>(options.pack));
  h.Add(options.pack == PackMode::kBestFit ? options.bestfit_window : 0);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h.value()));
  return hex;
}

}  // namespace stoker::plan
