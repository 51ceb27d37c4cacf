#include "diag/report_html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "common/file_util.h"
#include "diag/bench_report.h"
#include "diag/html_parts.h"

namespace stoker::diag {
namespace {

constexpr size_t kMaxPoints = 600;

// A time plot of one series of the timeline: tokens/s, or the stall share.
std::string TimelinePlot(const std::string& id, const std::string& title,
                         const std::vector<BenchSample>& samples, bool stall, const char* color) {
  PlotSpec spec;
  spec.id = id;
  spec.title = title;
  spec.y_format = stall ? AxisFormat::kPercent : AxisFormat::kSi;
  if (stall) spec.y_min_top = 0.05;  // the monitor's 5% threshold stays on the axis
  PlotSeries series{{}, color};
  for (const BenchSample& s : samples) {
    series.points.emplace_back(s.t_s, stall ? s.stall_share : s.tokens_per_s);
  }
  spec.series.push_back(std::move(series));
  return RenderLinePlot(spec);
}

std::string StageBars(const BenchResult& r) {
  struct Bar {
    const char* name;
    double s;
    bool applicable;
    const char* color;
  };
  const Bar bars[] = {{"read", r.read_s, true, kReadColor},
                      {"tokenize", r.tokenize_s, r.tokenize_s >= 0, kReadColor},
                      {"assemble", r.assemble_s, true, kAssembleColor},
                      {"host->device copy", r.copy_s, r.device_batches, kCopyColor},
                      {"consumer wait", r.consumer_wait_s, true, kWaitColor}};
  double max_s = 0;
  for (const Bar& b : bars) max_s = b.applicable ? std::max(max_s, b.s) : max_s;
  if (max_s <= 0) max_s = 1;
  const int row = 34, left = 150, width = kPlotWidth - left - 120;
  const int height = kPlotTop + row * 5 + 10;
  std::string svg =
      "<svg id=\"plot-stages\" class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"" +
      std::to_string(kPlotWidth) + "\" height=\"" + std::to_string(height) + "\">\n";
  svg +=
      "<text x=\"10\" y=\"18\" class=\"title\">Time per stage in the measured window "
      "(seconds summed over all threads)</text>\n";
  int y = kPlotTop;
  for (const Bar& b : bars) {
    svg += "<text x=\"" + std::to_string(left - 8) + "\" y=\"" + std::to_string(y + 18) +
           "\" text-anchor=\"end\">" + HtmlEscape(b.name) + "</text>\n";
    if (b.applicable) {
      const double w = std::max(3.0, width * b.s / max_s);  // a tiny stage stays visible
      svg += "<rect class=\"bar\" x=\"" + std::to_string(left) + "\" y=\"" + std::to_string(y + 4) +
             "\" width=\"" + SvgNum(w) + "\" height=\"22\" fill=\"" + b.color + "\"/>\n";
      svg += "<text x=\"" + SvgNum(left + w + 6) + "\" y=\"" + std::to_string(y + 20) + "\">" +
             SvgNum(b.s) + " s</text>\n";
    } else {
      svg += "<text x=\"" + std::to_string(left) + "\" y=\"" + std::to_string(y + 18) +
             "\">n/a</text>\n";
    }
    y += row;
  }
  return svg + "</svg>\n";
}

}  // namespace

std::vector<BenchSample> Downsample(const std::vector<BenchSample>& in) {
  if (in.size() <= kMaxPoints) return in;
  const size_t per = (in.size() + kMaxPoints - 1) / kMaxPoints;
  std::vector<BenchSample> out;
  for (size_t i = 0; i < in.size(); i += per) {
    BenchSample s;
    const size_t end = std::min(in.size(), i + per);
    for (size_t k = i; k < end; ++k) {
      s.tokens_per_s += in[k].tokens_per_s;
      s.stall_share += in[k].stall_share;
    }
    s.tokens_per_s /= double(end - i);
    s.stall_share /= double(end - i);
    s.t_s = in[end - 1].t_s;
    out.push_back(s);
  }
  return out;
}

std::string RenderReportHtml(const BenchResult& r, const std::string& title) {
  const std::vector<BenchSample> samples = Downsample(r.timeline);
  std::string html = HtmlPageStart("stoker bench: " + title, "stoker bench");
  html += "<p>" + HtmlEscape(title) + "</p>\n<p>Warm-up excluded: the first " +
          std::to_string(r.warmup_batches) + " batches are not measured.</p>\n";
  html += TimelinePlot("plot-throughput", "Delivered tokens/s", samples, false, kThroughputColor);
  html +=
      TimelinePlot("plot-stall",
                   r.consumer_step_ms > 0
                       ? "Stall: share of time the consumer waited for a batch"
                       : "Stall: share of time in Next() (loader only: the consumer only waits)",
                   samples, true, kStallColor);
  html += StageBars(r);
  html += FiguresTableHtml(r);
  return html + HtmlPageEnd();
}

Status WriteReportHtml(const BenchResult& r, const std::string& title, const std::string& path) {
  return WriteFileAtomically(path, RenderReportHtml(r, title)).WithContext("report " + path);
}

}  // namespace stoker::diag
