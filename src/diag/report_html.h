// The bench report: one self-contained HTML page (inline SVG and CSS, no script, no network) with
// throughput and stall over time, the per-stage breakdown and the table of figures.
// Free functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "diag/bench_runner.h"

namespace stoker::diag {

// Colours of the plotted series; tests look for them in a rendered screenshot.
inline constexpr const char* kThroughputColor = "#1f77b4";
inline constexpr const char* kStallColor = "#d62728";
inline constexpr const char* kReadColor = "#2ca02c";
inline constexpr const char* kAssembleColor = "#ff7f0e";
inline constexpr const char* kCopyColor = "#9467bd";
inline constexpr const char* kWaitColor = "#8c564b";

// `title` names the run (datasets and options); it is HTML-escaped.
std::string RenderReportHtml(const BenchResult& r, const std::string& title);

// Writes the page to `path` atomically. Errors name the path.
Status WriteReportHtml(const BenchResult& r, const std::string& title, const std::string& path);

// The timeline averaged down to at most 600 points, so a long run stays a light page.
std::vector<BenchSample> Downsample(const std::vector<BenchSample>& in);

}  // namespace stoker::diag
