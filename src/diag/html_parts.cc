#include "diag/html_parts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/escape.h"
#include "diag/bench_report.h"

namespace stoker::diag {
namespace {

constexpr int kHeight = 250;
constexpr int kLeft = 70, kRight = 60, kBottom = 40;

std::string YLabel(double y, const AxisTicks& ticks, AxisFormat f) {
  if (y == 0) return f == AxisFormat::kPercent ? "0%" : f == AxisFormat::kRatio ? "0x" : "0";
  switch (f) {
    case AxisFormat::kPercent:
      return TickLabel(100 * y, 100 * ticks.step) + "%";
    case AxisFormat::kRatio:
      return TickLabel(y, ticks.step) + "x";
    case AxisFormat::kSi:
      break;
  }
  // One SI unit for the whole axis, the top tick's: 0, 50 M, ..., 250 M.
  static const char* kUnits[] = {"", " k", " M", " G", " T", " P"};
  int u = 0;
  double scale = 1;
  while (ticks.top / scale >= 1000 && u < 5) {
    scale *= 1000;
    ++u;
  }
  return TickLabel(y / scale, ticks.step / scale) + kUnits[u];
}

}  // namespace

std::string SvgNum(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", x);
  return buf;
}

std::string HtmlEscape(const std::string& s) { return EscapeMarkup(s); }

AxisTicks RoundTicks(double max_value, int target) {
  AxisTicks t;
  if (!(max_value > 0) || !std::isfinite(max_value)) return t;  // 0..1 in one step
  target = std::max(1, target);
  const double raw = max_value / target;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    t.step = m * power;
    if (t.step >= raw * (1 - 1e-12)) break;
  }
  t.count = std::max(1, static_cast<int>(std::ceil(max_value / t.step - 1e-9)));
  t.top = t.count * t.step;
  return t;
}

std::string TickLabel(double value, double step) {
  // Digits after the point that the step needs (2.5 -> 1, 0.05 -> 2, 100 -> 0).
  int decimals = 0;
  while (decimals < 6 && std::fabs(step * std::pow(10.0, decimals) -
                                   std::round(step * std::pow(10.0, decimals))) > 1e-6) {
    ++decimals;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, value);
  return buf;
}

std::string RenderLinePlot(const PlotSpec& spec) {
  double t_max = 0, y_max = spec.y_min_top;
  for (const PlotSeries& s : spec.series) {
    for (const auto& [t, y] : s.points) {
      t_max = std::max(t_max, t);
      y_max = std::max(y_max, y);
    }
  }
  for (const PlotRule& r : spec.rules) y_max = std::max(y_max, r.y);
  // Leave a little room above the highest point, then round up to a tick; a share stays <= 100%.
  double room = y_max * 1.05;
  if (spec.y_format == AxisFormat::kPercent && y_max <= 1) room = std::min(room, 1.0);
  const AxisTicks yt = RoundTicks(room);
  // A run of --seconds 3 ends a few ms past 3 s: that should not add an empty step to the axis.
  const AxisTicks xt = RoundTicks(t_max / 1.01, 5);
  const double pw = kPlotWidth - kLeft - kRight, ph = kHeight - kPlotTop - kBottom;
  auto X = [&](double t) { return kLeft + pw * t / xt.top; };
  auto Y = [&](double y) { return kPlotTop + ph * (1 - y / yt.top); };
  std::string svg = "<svg id=\"" + spec.id +
                    "\" class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" "
                    "width=\"" +
                    std::to_string(kPlotWidth) + "\" height=\"" + std::to_string(kHeight) + "\">\n";
  svg += "<text x=\"" + std::to_string(kLeft) + "\" y=\"18\" class=\"title\">" +
         HtmlEscape(spec.title) + "</text>\n";
  svg += "<rect x=\"" + std::to_string(kLeft) + "\" y=\"" + std::to_string(kPlotTop) +
         "\" width=\"" + SvgNum(pw) + "\" height=\"" + SvgNum(ph) +
         "\" fill=\"none\" stroke=\"#999\"/>\n";
  for (int i = 0; i <= yt.count; ++i) {
    const double y = yt.step * i;
    svg += "<line x1=\"" + std::to_string(kLeft) + "\" x2=\"" + SvgNum(kLeft + pw) + "\" y1=\"" +
           SvgNum(Y(y)) + "\" y2=\"" + SvgNum(Y(y)) + "\" stroke=\"#eee\"/>\n";
    svg += "<text class=\"ytick\" x=\"" + std::to_string(kLeft - 6) + "\" y=\"" + SvgNum(Y(y) + 4) +
           "\" text-anchor=\"end\">" + YLabel(y, yt, spec.y_format) + "</text>\n";
  }
  for (int i = 0; i <= xt.count; ++i) {
    const double t = xt.step * i;
    svg += "<text class=\"xtick\" x=\"" + SvgNum(X(t)) + "\" y=\"" +
           std::to_string(kHeight - kBottom + 16) + "\" text-anchor=\"middle\">" +
           TickLabel(t, xt.step) + " s</text>\n";
  }
  for (const PlotRule& r : spec.rules) {
    svg += "<line class=\"rule\" x1=\"" + std::to_string(kLeft) + "\" x2=\"" + SvgNum(kLeft + pw) +
           "\" y1=\"" + SvgNum(Y(r.y)) + "\" y2=\"" + SvgNum(Y(r.y)) + "\" stroke=\"" + r.color +
           "\" stroke-width=\"2\" stroke-dasharray=\"8 5\"/>\n";
    svg += "<text x=\"" + SvgNum(kLeft + pw + 4) + "\" y=\"" + SvgNum(Y(r.y) + 4) + "\">" +
           HtmlEscape(r.label) + "</text>\n";
  }
  for (const PlotSeries& s : spec.series) {
    std::string points;
    for (const auto& [t, y] : s.points) points += SvgNum(X(t)) + "," + SvgNum(Y(y)) + " ";
    svg += "<polyline class=\"series\" fill=\"none\" stroke=\"" + std::string(s.color) +
           "\" stroke-width=\"3\" points=\"" + points + "\"/>\n";
    for (const auto& [t, y] : s.points) {
      svg += "<circle cx=\"" + SvgNum(X(t)) + "\" cy=\"" + SvgNum(Y(y)) + "\" r=\"3\" fill=\"" +
             s.color + "\"/>\n";
    }
  }
  svg += "<text x=\"" + SvgNum(kLeft + pw / 2) + "\" y=\"" + std::to_string(kHeight - 4) +
         "\" text-anchor=\"middle\">" + HtmlEscape(spec.x_label) + "</text>\n";
  return svg + "</svg>\n";
}

std::string HtmlPageStart(const std::string& title, const std::string& heading) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" +
         HtmlEscape(title) +
         "</title>\n<style>body{font:14px sans-serif;margin:20px;color:#222;background:#fff}"
         "svg{display:block;margin:12px 0}svg text{font:12px sans-serif;fill:#333}"
         "svg text.title{font-weight:bold;font-size:14px}table{border-collapse:collapse}"
         "td{padding:2px 12px;border-bottom:1px solid #eee}td.v{text-align:right}"
         ".verdict{font-size:22px;font-weight:bold;padding:8px 14px;display:inline-block;"
         "color:#fff}.pass{background:#2a7d2a}.fail{background:#b42318}</style>\n"
         "</head><body>\n<h1>" +
         HtmlEscape(heading) + "</h1>\n";
}

std::string HtmlPageEnd() { return "</body></html>\n"; }

std::string FiguresTableHtml(const BenchResult& r) {
  std::string html = "<table id=\"figures\">\n";
  for (const Figure& f : BenchFigures(r)) {
    char exact[64] = "";
    if (f.applicable) std::snprintf(exact, sizeof(exact), "%.17g", f.value);
    html += "<tr><td>" + HtmlEscape(f.label) + "</td><td class=\"v\" data-key=\"" + f.key +
            "\" data-value=\"" + exact + "\">" + HtmlEscape(FormatFigure(f)) + "</td></tr>\n";
  }
  return html + "</table>\n";
}

}  // namespace stoker::diag
