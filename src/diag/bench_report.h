// The figures of a bench run as one list, rendered as the end-of-run table and as the --json
// object, so both always hold the same figures under the same keys. Free functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "diag/bench_runner.h"

namespace stoker::diag {

struct Figure {
  std::string key;    // JSON key, e.g. "tokens_per_s"
  std::string label;  // table label, e.g. "tokens/s"
  double value = 0;
  bool applicable = true;  // false: "n/a" in the table, null in JSON
  enum class Kind { kRate, kSeconds, kBytes, kCount, kShare } kind = Kind::kRate;
};

// Every figure of the table, in table order.
std::vector<Figure> BenchFigures(const BenchResult& r);

// The end-of-run table: headline figures, then the per-stage breakdown (seconds over all
// threads, ms per batch, share of the pipeline's stage time). Ends with a newline.
std::string RenderBenchTable(const BenchResult& r);

// One object: every figure of BenchFigures under its key, plus "setting" (loader options and
// what the loader used) and "warmup_excluded": true.
nlohmann::json BenchJson(const BenchResult& r, const LoaderOptions& options, bool synthetic,
                         double consumer_step_ms);

// "1.23 M", "456", "0.00123": three significant digits with an SI prefix for large numbers.
std::string FormatSi(double x);

// A figure as the table shows it: "266 M", "0.412 s", "1.2 GiB", "3.4%", or "n/a".
std::string FormatFigure(const Figure& f);

}  // namespace stoker::diag
