// Loss-mask spans (docs/chat.md, "On disk"): which tokens of a chat document are trained, stored
// as int32 pairs [start, end) of token offsets within the document, increasing, non-empty and
// non-overlapping. A dataset with a loss mask keeps them as a stoker dataset of its own
// (Manifest::loss_mask), document for document, so that every path that reads, caches, merges
// or verifies token shards carries the mask too. Pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "stoker/document_reader.h"
#include "stoker/status.h"

namespace stoker {

// Appends the spans of `mask` (one byte per token, non-zero = trained) to *spans and returns the
// number of trained tokens.
uint64_t MaskToSpans(std::span<const uint8_t> mask, std::vector<int32_t>* spans);

// Checks that `spans` are increasing, non-empty pairs within a document of `length` tokens;
// kCorruption naming `where` otherwise.
Status CheckSpans(std::span<const int32_t> spans, uint64_t length, const std::string& where);

// Sets out[k] for k < count to 1 where token offset + k is inside a span, else 0.
void SpansToMask(std::span<const int32_t> spans, uint64_t offset, uint64_t count, uint8_t* out);

// Reads document `doc`'s spans from `spans` (the loss-mask dataset) and fills `out` as SpansToMask
// does; `length` is the document's length in tokens, and `scratch` is reused between calls.
Status ReadLossMask(const DocumentReader& spans, uint64_t doc, uint64_t length, uint64_t offset,
                    uint64_t count, uint8_t* out, std::vector<int32_t>* scratch);

class StokerDataset;
class TokenSource;

struct RemoteDatasetOptions;

// The loss-mask dataset of `data` (local, or remote with `remote`'s reads and cache), or null
// when `data` is not a stoker dataset or has no loss mask. Errors name the mask's manifest or
// shard; a mask whose document count differs from the data's is kCorruption.
Result<std::unique_ptr<StokerDataset>> OpenLossMask(const TokenSource& data,
                                                    const RemoteDatasetOptions& remote);
Result<std::unique_ptr<StokerDataset>> OpenLossMask(const TokenSource& data);

}  // namespace stoker
