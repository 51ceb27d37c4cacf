// `stoker bench --calibrate TIMES`: fit the cost model cost(L) = a·L + b·L² + c to measured
// microbatch times (docs/plan.md, "Balanced steps"), so a C++ trainer's user calibrates too.
// TIMES is JSONL, one microbatch a line: {"lengths": [L, ...], "seconds": s}, as
// stoker.calibrate(..., save=PATH) writes it. Not thread-safe: used by one command line.
#pragma once

#include <string>
#include <vector>

#include "plan/cost_model.h"
#include "stoker/status.h"

namespace stoker::cli {

// The samples of a TIMES file. A line that is not such an object (bad JSON, a missing or
// non-numeric field, a length < 1, seconds not finite and > 0) is kInvalidArgument naming the
// file and the line number; blank lines are skipped.
Result<std::vector<plan::CostSample>> ReadCostSamples(const std::string& path);

// Reads, fits and prints a, b, c, R² and the --model-config value (or, with json, one object).
// Returns the process exit code.
int RunCalibrateCommand(const std::string& path, bool json);

}  // namespace stoker::cli
