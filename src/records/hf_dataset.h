// Hugging Face `datasets` save_to_disk directories (docs/formats-reference.md §7.1): state.json
// lists the Arrow IPC stream files whose rows, concatenated in order, are the dataset. Listing
// needs no Arrow; reading the files does (records/arrow_sources.h). Thread-safe (no state).
#pragma once

#include <string>
#include <vector>

#include "records/record_source.h"

namespace stoker {

// True when `dir` holds state.json (a Dataset) or dataset_dict.json (a DatasetDict).
bool IsHfDatasetDir(const std::string& dir, const RecordStore& store = {});

// The data files of the Dataset in `dir`, in state.json's order, as kArrow shards. A
// DatasetDict directory is kInvalidArgument naming its splits (pass one split's directory);
// kCorruption for a malformed state.json; kNotFound for a listed file that is missing.
// Remote (`store`): one GET of state.json, and the files' sizes from one listing of `dir`
// (s3://) or a HEAD each (http(s)://).
Result<std::vector<RecordShard>> ListHfDatasetShards(const std::string& dir,
                                                     const RecordStore& store = {});

}  // namespace stoker
