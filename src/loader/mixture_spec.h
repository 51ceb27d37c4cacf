// A mixture file read for a run (docs/plan.md, "Schedules"): its datasets as the loader and the
// CLI open them, and its phases resolved to global rows for the run's seq_len, global batch and
// length. Also the check that mixed datasets share one tokenizer. Plain functions; thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "plan/mixture_file.h"
#include "stoker/plan.h"
#include "stoker/status.h"
#include "stoker/token_source.h"

namespace stoker {

struct MixtureSpec {
  std::string file;
  std::vector<std::string> names;        // the file's dataset names, in its order
  std::vector<std::string> paths;        // resolved against the file's directory
  std::vector<double> weights;           // one mixture: its weights; with phases: 1 each (unused)
  std::vector<MixturePhase> phases;      // empty for one mixture
  uint64_t run_rows = 0;                 // the run's length in global rows (PlanOptions::run_rows)
  std::string tokens_per_step_schedule;  // its batch-size schedule, resolved ("" for none)
};

// Reads and resolves `path`. kInvalidArgument names the file and the key (ParseMixtureFile).
Result<MixtureSpec> ReadMixtureSpec(const std::string& path, uint64_t seq_len,
                                    uint64_t global_batch_rows, const plan::RunLength& run);

// kInvalidArgument when two of `sources` record different tokenizers (kind, vocabulary size,
// model checksum); `names` names them in the message. Sources that record none are not compared.
Status CheckSameTokenizer(const std::vector<std::shared_ptr<const TokenSource>>& sources,
                          const std::vector<std::string>& names);

}  // namespace stoker
