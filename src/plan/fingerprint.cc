#include "plan/fingerprint.h"

#include <numeric>

#include "common/hash.h"
#include "format/length_hash.h"

namespace stoker::plan {

uint64_t HashLengths(const DatasetLengths& lengths) {
  if (lengths.totals && lengths.totals->length_hash) return *lengths.totals->length_hash;
  if (lengths.totals && lengths.totals->hash_lengths) return lengths.totals->hash_lengths();
  FingerprintHasher h;
  const uint64_t n = lengths.num_documents();
  for (uint64_t d = 0; d < n; ++d) h.Add(lengths.length(d));
  return h.value();
}

void AddStreamOptions(const PlanOptions& o, FingerprintHasher* h) {
  h->Add(o.seq_len);
  h->Add(o.seed);
  h->Add(static_cast<uint64_t>(o.shuffle));
  h->Add(o.shuffle == ShuffleMode::kBlock ? o.block_shards : 0);
  h->Add(static_cast<uint64_t>(o.pack));
  h->Add(o.pack == PackMode::kBestFit ? o.bestfit_window : 0);
  // Only when set, so that plans without it keep their fingerprints.
  if (o.pad_each_document_to > 1) {
    h->Add(0x706164646f63ull);  // "paddoc"
    h->Add(o.pad_each_document_to);
  }
  if (o.max_documents_per_row > 0) {
    h->Add(0x6d6178646f6373ull);  // "maxdocs"
    h->Add(o.max_documents_per_row);
  }
}

namespace {

std::string Compute(const std::vector<PlanDataset>& datasets, const std::vector<uint64_t>& tokens,
                    const PlanOptions& options, const std::vector<uint64_t>& keys,
                    const MixtureOrigin* origin, bool mixture_tree) {
  FingerprintHasher h;
  h.Add(PlanState::kVersion);
  h.Add(datasets.size());
  for (size_t i = 0; i < datasets.size(); ++i) {
    const PlanDataset& ds = datasets[i];
    const DatasetLengths& l = *ds.lengths;
    h.Add(l.num_documents());
    h.Add(tokens[i]);
    h.Add(HashLengths(l));
    h.Add(l.shard_first_document.size());
    for (uint64_t first : l.shard_first_document) h.Add(first);
    // Weights enter relative to their sum so "1:a 1:b" and "2:a 2:b" agree.
    double sum = 0;
    for (const PlanDataset& other : datasets) sum += other.weight;
    h.AddDouble(datasets.size() == 1 ? 1.0 : ds.weight / sum);
  }
  // Three or more datasets interleave by the tree of plan/mixture.h since schedules came; two
  // interleave exactly as before (the deficit rule), so only the former changed fingerprint.
  if (mixture_tree && datasets.size() >= 3) h.Add(0x74726565ull);  // "tree"
  AddStreamOptions(options, &h);
  // Steps counted in tokens enter only when on, so the row plans keep their fingerprints.
  if (options.tokens_per_step > 0) {
    h.Add(0x746f6b656e73ull);  // "tokens"
    for (uint64_t v : {options.tokens_per_step, options.microbatches,
                       options.max_tokens_per_microbatch > 0 ? options.max_tokens_per_microbatch
                                                             : options.seq_len,
                       static_cast<uint64_t>(options.balance)}) {
      h.Add(v);
    }
    if (options.balance == BalanceMode::kAttention) {
      for (double v : {options.step_cost.a, options.step_cost.b, options.step_cost.c}) {
        h.AddDouble(v);
      }
    }
  }
  // A schedule enters only when there is one, so plans without one keep their fingerprints.
  auto add_relative = [&h](const std::vector<double>& w) {
    const double sum = std::accumulate(w.begin(), w.end(), 0.0);
    for (double x : w) h.AddDouble(x / sum);
  };
  if (!options.phases.empty()) h.Add(options.phases.size());
  for (const MixturePhase& phase : options.phases) {
    h.Add(phase.end_row);
    add_relative(phase.weights);
    h.Add(phase.end_weights.size());
    if (!phase.end_weights.empty()) add_relative(phase.end_weights);
  }
  if (origin != nullptr) {
    h.Add(origin->row);
    for (const DatasetCursor& c : origin->datasets) {
      for (uint64_t v : {c.documents, c.shards, c.key, c.epoch, c.row}) h.Add(v);
    }
    for (uint64_t key : keys) h.Add(key);
  }
  return Xxh3Hex(h.value());
}

}  // namespace

std::string ComputeFingerprint(const std::vector<PlanDataset>& datasets,
                               const std::vector<uint64_t>& tokens, const PlanOptions& options,
                               const std::vector<uint64_t>& keys, const MixtureOrigin* origin) {
  return Compute(datasets, tokens, options, keys, origin, /*mixture_tree=*/true);
}

std::string FingerprintBeforeMixtureTree(const std::vector<PlanDataset>& datasets,
                                         const std::vector<uint64_t>& tokens,
                                         const PlanOptions& options) {
  if (datasets.size() < 3 || !options.phases.empty()) return "";
  return Compute(datasets, tokens, options, {}, nullptr, /*mixture_tree=*/false);
}

}  // namespace stoker::plan
