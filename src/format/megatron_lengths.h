// The lengths the plan reads of a Megatron input (its `.idx` `sizes` array, in place) and their
// totals, with no pass over the array before the first batch (docs/plan.md, "Scale"):
// - tokens: O(1), from the .bin's size. Open checks that the first sequence starts at byte 0 and
//   the last one ends at the .bin's end; each chunk of 1,024 sequences is checked the first time
//   the plan reads it (lengths non-negative; its sequences spanning exactly their tokens' bytes,
//   as Megatron writes them end to end), so the sum of the lengths is the .bin's size, and a file
//   for which it is not is an error naming the .idx and the sequences, never a plan from a wrong
//   total;
// - non-empty documents (pad's row count, statistics): counted in parallel when first needed;
// - the fingerprint's length hash (a chain, hence one thread): computed when the fingerprint is
//   first asked for (a checkpoint, `stoker plan --state`, `--stats`).
// The last two are kept in the cache directory (common/window_counts.h) under a name made of the
// .idx file's identity (device, inode, size, modification and change times): the other ranks of the
// machine wait on a lock while the first one counts, then read them, as do later runs.
// Free functions; thread-safe (the lazy totals are computed once per open, under a lock).
#pragma once

#include <cstdint>

#include "format/megatron_source.h"
#include "stoker/dataset_lengths.h"

namespace stoker {

// `source`'s lengths read in place, with their totals (lazy as above) and chunk checks.
// kCorruption naming the .idx and the .bin when the first sequence does not start at byte 0 or the
// last does not end at the .bin's end.
Result<DatasetLengths> MegatronLengths(const MegatronSource& source);

// Passes over a whole sizes array made so far by this process (tests: a first batch makes none).
uint64_t MegatronLengthPasses();

}  // namespace stoker
