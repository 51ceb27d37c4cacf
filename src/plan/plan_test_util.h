// Helpers for the plan tests: synthetic datasets and a token-coverage checker.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/temp_dir.h"
#include "format/length_index.h"
#include "plan/mapped_lengths.h"
#include "stoker/plan.h"

namespace stoker::plan::testing {

// The plan tests never write window counts into the user's cache directory: caching is off unless
// a test turns it on for a directory of its own (window_counts_test.cc).
inline const bool kCacheOffInTests = setenv("STOKER_CACHE_DIR", "off", 1) == 0;

// Where MakeLengths's lengths live: in a vector, or in a length index file read through a memory
// mapping (as StokerDataset gives them to the plan). The property tests run on both.
enum class LengthsBacking { kInMemory, kMapped };
inline LengthsBacking& Backing() {
  static LengthsBacking backing = LengthsBacking::kInMemory;
  return backing;
}

// The same lengths read in place from a length index file (with the totals of its header).
inline std::shared_ptr<const DatasetLengths> AsMapped(const DatasetLengths& in) {
  static std::unique_ptr<TempDir> dir = std::move(TempDir::Create()).value();
  static int files = 0;
  const std::string path = dir->Join("lengths-" + std::to_string(files++) + ".stkidx");
  std::vector<uint64_t> shards = in.shard_first_document;
  if (shards.empty()) shards = {0, in.document_lengths.size()};
  EXPECT_TRUE(WriteLengthIndex(path, shards, in.document_lengths).ok());
  auto index = LengthIndex::Open(path);
  EXPECT_TRUE(index.ok()) << index.status().ToString();
  auto out = std::make_shared<DatasetLengths>(LengthsFromIndex(*index, in.name));
  out->shard_first_document = in.shard_first_document;
  return out;
}

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
  if (Backing() == LengthsBacking::kMapped) return AsMapped(*out);
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
    for (uint64_t d = 0; d < lengths.num_documents(); ++d) {
      uint64_t want = std::min(lengths.length(d), limit);
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
      if (key.first == dataset && key.second >= lengths.num_documents()) {
        return "document " + std::to_string(key.second) + " does not exist";
      }
    }
    return "";
  }

 private:
  std::map<std::pair<uint32_t, uint64_t>, std::vector<std::pair<uint64_t, uint64_t>>> ranges_;
};

}  // namespace stoker::plan::testing
