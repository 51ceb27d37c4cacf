// Inspect: the summary behind `stoker inspect`: format, shards, documents, tokens, dtype, the
// tokenizer (stoker datasets) and the document-length distribution (min/mean/max and a histogram
// with power-of-two buckets). Reads only document lengths, never tokens.
// Plain values and free functions; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/manifest.h"
#include "stoker/token_source.h"

namespace stoker {

struct LengthBucket {
  uint64_t min_length = 0;  // inclusive
  uint64_t max_length = 0;  // inclusive
  uint64_t documents = 0;
};

struct InspectSummary {
  std::string path;
  std::string format;
  TokenDType dtype = TokenDType::kUint16;
  uint64_t shards = 0;
  uint64_t documents = 0;
  uint64_t tokens = 0;
  uint64_t min_length = 0;
  uint64_t max_length = 0;
  double mean_length = 0;
  // Buckets [0,0], [1,1], [2,3], [4,7], ... from the first to the last non-empty one.
  std::vector<LengthBucket> histogram;
  std::optional<TokenizerInfo> tokenizer;  // where the format records it
  // Chat data (a stoker dataset with a loss mask): the tokens the mask trains.
  std::optional<uint64_t> trained_tokens;

  // Machine-readable form (stable keys) for `stoker inspect --json`.
  std::string ToJson() const;
  // Human-readable form, a few aligned lines and a bar per histogram bucket.
  std::string ToText() const;
};

InspectSummary Inspect(const TokenSource& source);

// The token ids of document `doc` as a JSON array, e.g. "[1,2,3]". kOutOfRange for a bad `doc`.
// With `loss_mask` (format/loss_mask.h): an object {"tokens": [...], "loss_mask": [0,1,...],
// "trained_tokens": N}, the mask one entry per token.
Result<std::string> DocumentToJson(const TokenSource& source, uint64_t doc,
                                   const DocumentReader* loss_mask = nullptr);

// Document `doc` decoded by `decode` (the ids of a run to its text), with each run of trained
// tokens wrapped in `open` ... `close`.
struct MarkedDocument {
  std::string text;
  uint64_t tokens = 0, trained_tokens = 0;
};
Result<MarkedDocument> MarkTrainedText(
    const TokenSource& source, uint64_t doc, const DocumentReader& loss_mask,
    const std::function<Result<std::string>(const std::vector<int32_t>&)>& decode,
    std::string_view open, std::string_view close);

}  // namespace stoker
