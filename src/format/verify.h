// Verify: the deep check behind `stoker verify`. For a stoker dataset it recomputes every shard's
// XXH3 checksums and compares sizes, counts and dtype with the manifest; for every format it runs
// the full index checks and reads every token (each must be a valid non-negative id, and below the
// tokenizer's vocabulary size when the manifest gives one).
// Free function; thread-safe as long as callers use different reporters.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/progress.h"
#include "stoker/status.h"

namespace stoker {

struct VerifyReport {
  std::string path;
  std::string format;  // "stoker", "megatron", ...; empty if it could not be told
  uint64_t files = 0;  // data files checked
  uint64_t bytes = 0;  // bytes read
  uint64_t documents = 0;
  uint64_t tokens = 0;
  // One line per problem, each naming the file (and byte offset where it applies).
  std::vector<std::string> problems;
  bool ok() const { return problems.empty(); }
};

// Problems found in the data are listed in the report (at most kMaxProblemsPerFile per file).
// A status error means nothing could be checked: `path` missing or of an unknown format.
// `progress` (may be null) receives documents and bytes as they are checked.
Result<VerifyReport> Verify(const std::string& path, ProgressReporter* progress);

inline constexpr size_t kMaxProblemsPerFile = 10;

}  // namespace stoker
