// Helpers for the plan tests: synthetic datasets and a token-coverage checker.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "stoker/plan.h"

namespace stoker::plan::testing {

// `n` documents with log-normal lengths (median `median`), about `zero_share` of them empty, cut
// into `shards` shards of random sizes.
inline std::shared_ptr<const DatasetLengths> MakeLengths(uint64_t n, double median,
                                                         double zero_share, uint64_t shards,
                                                         uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> len(std::log(median), 1.0);
  std::uniform_real_distribution<double> u(0, 1);
  auto out = std::make_shared<DatasetLengths>();
  out->name = "synthetic-" + std::to_string(seed);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t l = u(rng) < zero_share ? 0 : 1 + static_cast<uint64_t>(len(rng));
    out->document_lengths.push_back(l);
  }
  if (n > 0 && std::all_of(out->document_lengths.begin(), out->document_lengths.end(),
                           [](uint64_t l) { return l == 0; })) {
    out->document_lengths[0] = 1;
  }
  std::vector<uint64_t> cuts{0, n};
  for (uint64_t s = 1; s < shards; ++s) cuts.push_back(rng() % (n + 1));
  std::sort(cuts.begin(), cuts.end());
  out->shard_first_document = cuts;
  return out;
}

inline std::unique_ptr<Plan> MakePlan(std::vector<PlanDataset> datasets, const PlanOptions& o) {
  auto plan = Plan::Create(std::move(datasets), o);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return plan.ok() ? std::move(plan).value() : nullptr;
}

// Collects the token ranges placed in rows, per (dataset, document).
class Coverage {
 public:
  void Add(const Row& row) {
    for (const RowPiece& p : row.pieces)
      ranges_[{p.dataset, p.document}].push_back({p.offset, p.length});
  }
  void Add(const std::vector<Row>& rows) {
    for (const Row& r : rows) Add(r);
  }
  // Every document of `dataset` is covered exactly once over [0, min(len, limit)): no overlap, no
  // gap, nothing else. Returns a description of the first problem, or "".
  std::string CheckExactlyOnce(uint32_t dataset, const DatasetLengths& lengths,
                               uint64_t limit = UINT64_MAX) const {
    for (uint64_t d = 0; d < lengths.document_lengths.size(); ++d) {
      uint64_t want = std::min(lengths.document_lengths[d], limit);
      auto it = ranges_.find({dataset, d});
      std::vector<std::pair<uint64_t, uint64_t>> r;
      if (it != ranges_.end()) r = it->second;
      std::sort(r.begin(), r.end());
      uint64_t at = 0;
      for (auto [off, len] : r) {
        if (off != at || len == 0) {
          return "document " + std::to_string(d) + ": piece at " + std::to_string(off) + " where " +
                 std::to_string(at) + " was expected";
        }
        at += len;
      }
      if (at != want) {
        return "document " + std::to_string(d) + ": covered " + std::to_string(at) + " of " +
               std::to_string(want) + " tokens";
      }
    }
    for (const auto& [key, r] : ranges_) {
      if (key.first == dataset && key.second >= lengths.document_lengths.size()) {
        return "document " + std::to_string(key.second) + " does not exist";
      }
    }
    return "";
  }

 private:
  std::map<std::pair<uint32_t, uint64_t>, std::vector<std::pair<uint64_t, uint64_t>>> ranges_;
};

}  // namespace stoker::plan::testing
