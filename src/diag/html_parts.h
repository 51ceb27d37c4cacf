// Pieces of the self-contained HTML reports (bench and doctor): escaping, round axis ticks, a line
// plot in inline SVG, the page frame and the table of bench figures. No script, no network.
// Free functions; thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "diag/bench_runner.h"

namespace stoker::diag {

std::string HtmlEscape(const std::string& s);

// The plots' width and top margin in SVG units (the bench report's stage bars share the frame).
inline constexpr int kPlotWidth = 760, kPlotTop = 30;

// An SVG coordinate with one decimal: "12.5".
std::string SvgNum(double x);

// Ticks 0, step, 2 step, ..., top at round values: step is 1, 2, 2.5 or 5 times a power of ten,
// chosen so that top >= max_value with about `target` steps (never more than 2 x target).
struct AxisTicks {
  double step = 1;
  double top = 1;
  int count = 1;  // steps from 0 to top
};
AxisTicks RoundTicks(double max_value, int target = 4);

// A tick label without float noise: 2.5, 100, 0.05 (%g of the value rounded to the step).
std::string TickLabel(double value, double step);

enum class AxisFormat { kSi, kPercent, kRatio };  // "250 M", "2.5%", "1.2x"

struct PlotSeries {
  std::vector<std::pair<double, double>> points;  // (t_s, y)
  const char* color;
};

// A dashed horizontal line across the plot, labelled at its right end (the 1.2x rule).
struct PlotRule {
  double y = 0;
  std::string label;
  const char* color = "#555";
};

struct PlotSpec {
  std::string id;  // the <svg> id
  std::string title;
  std::string x_label = "time since measuring began (warm-up excluded)";
  AxisFormat y_format = AxisFormat::kSi;
  double y_min_top = 0;  // the y axis reaches at least this (e.g. a threshold)
  std::vector<PlotSeries> series;
  std::vector<PlotRule> rules;
};

// An inline SVG line plot with round ticks on both axes; each series is a polyline with a dot per
// point (class "series").
std::string RenderLinePlot(const PlotSpec& spec);

// <!DOCTYPE html> ... <body><h1>heading</h1>, with the reports' shared style.
std::string HtmlPageStart(const std::string& title, const std::string& heading);
std::string HtmlPageEnd();

// The bench's figures: rounded with units for people, exact in data-value for scripts.
std::string FiguresTableHtml(const BenchResult& r);

}  // namespace stoker::diag
