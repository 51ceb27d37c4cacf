#include "diag/doctor_report.h"

#include <cstdio>
#include <vector>

#include "common/file_util.h"
#include "diag/bench_report.h"
#include "diag/html_parts.h"
#include "diag/report_html.h"

namespace stoker::diag {

std::string RenderDoctorReportHtml(const BenchResult& bench, const Consumption& consumption,
                                   const Verdict& verdict, const std::string& title) {
  std::string html = HtmlPageStart("stoker doctor: " + title, "stoker doctor");
  html += "<p>" + HtmlEscape(title) + "</p>\n";
  char line[256];
  std::snprintf(line, sizeof(line), "%s: delivered / consumed = %.2fx (rule: at least %.1fx)",
                verdict.pass ? "PASS" : "FAIL: the GPU will wait for data", verdict.ratio,
                kMinHeadroom);
  html += std::string("<p id=\"verdict\" class=\"verdict ") + (verdict.pass ? "pass" : "fail") +
          "\">" + HtmlEscape(line) + "</p>\n";
  html += "<p>Delivered by the loader alone: " + FormatSi(bench.tokens_per_s) +
          " tokens/s. Consumed by training: " + FormatSi(consumption.tokens_per_s) + " tokens/s (" +
          HtmlEscape(consumption.explanation) + ").</p>\n";

  PlotSpec spec;
  spec.id = "plot-ratio";
  spec.title = "Delivered / consumed over time (the GPU waits below the 1.2x line)";
  spec.y_format = AxisFormat::kRatio;
  PlotSeries ratio{{}, kRatioColor};
  if (consumption.tokens_per_s > 0) {
    for (const BenchSample& s : Downsample(bench.timeline)) {
      ratio.points.emplace_back(s.t_s, s.tokens_per_s / consumption.tokens_per_s);
    }
  }
  spec.series.push_back(std::move(ratio));
  std::snprintf(line, sizeof(line), "%.1fx", kMinHeadroom);
  spec.rules.push_back({kMinHeadroom, line, kRuleColor});
  html += RenderLinePlot(spec);

  std::snprintf(line, sizeof(line), "%.0f%% of stage time, %.3f s over all threads",
                100 * verdict.slowest_stage_share, verdict.slowest_stage_s);
  html += "<p>Slowest stage: <b>" + HtmlEscape(verdict.slowest_stage) + "</b> (" + line +
          ").</p>\n<h2>Advice</h2>\n<ul id=\"advice\">\n";
  for (const std::string& a : verdict.advice) html += "<li>" + HtmlEscape(a) + "</li>\n";
  html += "</ul>\n<h2>The bench (loader only, warm-up excluded)</h2>\n";
  html += FiguresTableHtml(bench);
  return html + HtmlPageEnd();
}

Status WriteDoctorReportHtml(const BenchResult& bench, const Consumption& consumption,
                             const Verdict& verdict, const std::string& title,
                             const std::string& path) {
  return WriteFileAtomically(path, RenderDoctorReportHtml(bench, consumption, verdict, title))
      .WithContext("report " + path);
}

}  // namespace stoker::diag
