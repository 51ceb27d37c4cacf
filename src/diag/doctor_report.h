// The doctor's report: one self-contained HTML page (inline SVG and CSS, no script, no network)
// with the verdict, delivered / consumed over time against the 1.2x line, the advice, how the
// consumption was worked out, and the bench's figures. Free functions; thread-safe.
#pragma once

#include <string>

#include "diag/bench_runner.h"
#include "diag/doctor.h"
#include "stoker/status.h"

namespace stoker::diag {

// Colours a test looks for in a rendered screenshot.
inline constexpr const char* kRatioColor = "#17becf";
inline constexpr const char* kRuleColor = "#555555";

// `title` names the run (datasets and options); it is HTML-escaped.
std::string RenderDoctorReportHtml(const BenchResult& bench, const Consumption& consumption,
                                   const Verdict& verdict, const std::string& title);

// Writes the page to `path` atomically. Errors name the path.
Status WriteDoctorReportHtml(const BenchResult& bench, const Consumption& consumption,
                             const Verdict& verdict, const std::string& title,
                             const std::string& path);

}  // namespace stoker::diag
