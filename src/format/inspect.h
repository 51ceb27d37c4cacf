// Inspect: the summary behind `stoker inspect`: format, shards, documents, tokens, dtype, the
// tokenizer (stoker datasets) and the document-length distribution (min/mean/max and a histogram
// with power-of-two buckets). Reads only document lengths, never tokens.
// Plain values and free functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
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

  // Machine-readable form (stable keys) for `stoker inspect --json`.
  std::string ToJson() const;
  // Human-readable form, a few aligned lines and a bar per histogram bucket.
  std::string ToText() const;
};

InspectSummary Inspect(const TokenSource& source);

// The token ids of document `doc` as a JSON array, e.g. "[1,2,3]". kOutOfRange for a bad `doc`.
Result<std::string> DocumentToJson(const TokenSource& source, uint64_t doc);

}  // namespace stoker
