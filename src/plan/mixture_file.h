// Mixture files (docs/plan.md, "Schedules"): which datasets a run mixes and how their weights
// change over the run, one JSON format for the CLI and Python:
//
//   {"datasets": {"web": "s3://corpus/web", "code": "data/code", "math": "data/math"},
//    "phases": [{"until": "90%", "weights": {"web": 0.8, "code": 0.15, "math": 0.05}},
//               {"weights": {"web": [0.5, 0.3], "code": 0.2, "math": [0.3, 0.5]}}]}
//
// `until` ends a phase at a share of the run ("90%"), a step ("12000 steps") or a token count
// ("1.8T tokens"); the last phase has none. A weight [a, b] ramps linearly from a to b across its
// phase. "tokens_per_step": [{"until": ..., "tokens": "4M" or [start, end]}, ...] is a batch-size
// schedule for steps counted in tokens (step_budget.h). Parsing is pure (text in, values out);
// resolving `until` to global rows needs the run's seq_len, global batch and length. Plain
// functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plan/step_budget.h"
#include "stoker/plan.h"
#include "stoker/status.h"

namespace stoker::plan {

struct PhaseEnd {
  enum class Unit : uint8_t { kShare, kSteps, kTokens };
  Unit unit = Unit::kShare;
  double value = 0;  // share in (0, 1], or a whole number of steps or tokens
};

struct MixtureFilePhase {
  std::optional<PhaseEnd> until;    // none for the last phase
  std::vector<double> weights;      // in the order of MixtureFile::names
  std::vector<double> end_weights;  // empty unless some weight ramps
};

// One phase of the file's batch-size schedule ("tokens_per_step": [{"until": ..., "tokens":
// "4M" or ["1M", "4M"]}, ...]; docs/plan.md, "Balanced steps").
struct MixtureFileBudget {
  std::optional<PhaseEnd> until;  // none for the last phase
  uint64_t tokens = 0;
  uint64_t end_tokens = 0;  // a ramp's end; 0: constant
};

struct MixtureFile {
  std::string file;                // as given, for messages
  std::vector<std::string> names;  // in the file's order
  std::vector<std::string> paths;  // relative paths resolved against the file's directory
  std::vector<MixtureFilePhase> phases;
  std::vector<MixtureFileBudget> step_tokens;  // empty: no batch-size schedule
};

// Parses the text of `file`. kInvalidArgument names the file and the key: unknown keys, a
// dataset named twice, weights that are not all >= 0 or sum to zero, a weight for an unknown
// dataset or none for a known one, `until` missing, malformed or out of order, the last phase
// with an `until`.
Result<MixtureFile> ParseMixtureFile(std::string_view text, const std::string& file);

// The run's length for shares of it: a token count or a step count (at most one).
struct RunLength {
  std::optional<uint64_t> total_tokens;
  std::optional<uint64_t> total_steps;
};

// The run's length in global rows: ceil(total_tokens / seq_len), or total_steps *
// global_batch_rows; 0 when neither is given (PlanOptions::run_rows).
uint64_t RunRows(const RunLength& run, uint64_t seq_len, uint64_t global_batch_rows);

// The phases as global rows: a share of the run times its rows (total_tokens / seq_len, or
// total_steps * global_batch_rows), steps * global_batch_rows, ceil(tokens / seq_len).
// kInvalidArgument if a share is used without a run length, or if the ends do not increase.
Result<std::vector<MixturePhase>> ResolvePhases(const MixtureFile& mixture, uint64_t seq_len,
                                                uint64_t global_batch_rows, const RunLength& run);

// The file's batch-size schedule as StepBudget::Text() ("" when it has none), its `until`s
// resolved to global rows as ResolvePhases resolves them (a step: global_batch_rows rows).
Result<std::string> ResolveStepTokens(const MixtureFile& mixture, uint64_t seq_len,
                                      uint64_t global_batch_rows, const RunLength& run);

// "2T", "1.8e12", "500B", "300M", "4096" (K, M, B or G, T: powers of 1000) -> a whole count.
Result<uint64_t> ParseCount(std::string_view text);

}  // namespace stoker::plan
