// The plan fingerprint: what a checkpoint must match to continue the same row stream.
#pragma once

#include <string>
#include <vector>

#include "format/length_hash.h"
#include "stoker/plan.h"

namespace stoker::plan {

// 16 lowercase hex digits over each dataset's document count, token count, lengths and shard
// boundaries, the weights, seq_len, seed, shuffle mode (and block_shards for block) and pack mode
// (and bestfit_window for bestfit). World size, batch size, rank and remainder are left out so a
// checkpoint can be restored on another world size or batch split.
// `tokens[i]`: the token count of datasets[i]. O(1) per dataset whose lengths carry totals (a
// length index), else one pass over its lengths.
// A continued plan (Plan::ContinueFrom) adds its datasets' shuffle keys and its origin; a plan
// without an origin keeps the fingerprint it always had.
std::string ComputeFingerprint(const std::vector<PlanDataset>& datasets,
                               const std::vector<uint64_t>& tokens, const PlanOptions& options,
                               const std::vector<uint64_t>& keys = {},
                               const MixtureOrigin* origin = nullptr);

// The fingerprint the same plan had before three or more datasets interleaved by the tree of
// plan/mixture.h (schedules have none: they came with the tree); "" where nothing changed. Only to
// say why an old checkpoint cannot continue: its rows were interleaved by the old rule.
std::string FingerprintBeforeMixtureTree(const std::vector<PlanDataset>& datasets,
                                         const std::vector<uint64_t>& tokens,
                                         const PlanOptions& options);

// Adds the options that decide each dataset's row stream: seq_len, seed, shuffle (and block_shards
// for block), pack (and bestfit_window for bestfit). The fingerprint and a mixture checkpoint's
// stream-options hash (plan_continue.cc) both take them from here.
void AddStreamOptions(const PlanOptions& options, FingerprintHasher* h);

// FingerprintHasher over the lengths: `lengths.totals->length_hash` when known, else computed.
uint64_t HashLengths(const DatasetLengths& lengths);

}  // namespace stoker::plan
