// How a loader reads the remote datasets it opens by path: under global shuffle whole shards
// through the cache when every shard fits its budget, else exact ranges per document piece (with
// a warning: bound by request latency); whole parts kept per open shard otherwise
// (format/shard_opener.h), with room for twice the shards a block-shuffle window spans. Free
// function; thread-safe.
#pragma once

#include "format/stoker_dataset.h"
#include "stoker/loader.h"

namespace stoker {

RemoteDatasetOptions RemoteOptionsFor(const LoaderOptions& options);

}  // namespace stoker
