// The totals the plan needs of a Megatron input (tokens, non-empty documents and the fingerprint's
// hash of the lengths, from the `.idx` sizes array), without a pass over the array in every
// process: counted once, then kept in the cache directory (window_counts.h) under a name made of
// the `.idx` file's identity (device, inode, size, modification and change times), which the other
// ranks of the machine (they wait on a lock while the first one counts) and later runs read
// instead (docs/plan.md, "Scale"). A file that fails its checks is recounted.
// Free function; thread-safe.
#pragma once

#include "format/megatron_source.h"
#include "stoker/plan.h"

namespace stoker::plan {

// Tokens (the sum of the lengths), non-empty documents and the length hash of `source`.
// kCorruption naming the .idx and the byte offset of a negative length.
Result<LengthTotals> MegatronTotals(const MegatronSource& source);

}  // namespace stoker::plan
