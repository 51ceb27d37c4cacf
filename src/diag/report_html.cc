#include "diag/report_html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "common/file_util.h"
#include "diag/bench_report.h"

namespace stoker::diag {
namespace {

constexpr int kWidth = 760, kHeight = 250;
constexpr int kLeft = 70, kRight = 20, kTop = 30, kBottom = 40;
constexpr size_t kMaxPoints = 600;

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string Num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", x);
  return buf;
}

// Averages neighbours so a long run stays a light page; a short one is drawn point by point.
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

// A line plot of y(t) with labelled axes; `percent` formats the y axis as a share.
std::string LinePlot(const std::string& id, const std::string& title,
                     const std::vector<BenchSample>& samples, bool stall, const char* color) {
  double t_max = 0, y_max = 0;
  for (const BenchSample& s : samples) {
    t_max = std::max(t_max, s.t_s);
    y_max = std::max(y_max, stall ? s.stall_share : s.tokens_per_s);
  }
  if (stall) y_max = std::max(y_max, 0.05);
  if (y_max <= 0) y_max = 1;
  y_max *= 1.1;
  if (t_max <= 0) t_max = 1;
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  auto X = [&](double t) { return kLeft + pw * t / t_max; };
  auto Y = [&](double y) { return kTop + ph * (1 - y / y_max); };
  std::string svg = "<svg id=\"" + id + "\" class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" "
                    "width=\"" + std::to_string(kWidth) + "\" height=\"" +
                    std::to_string(kHeight) + "\">\n";
  svg += "<text x=\"" + std::to_string(kLeft) + "\" y=\"18\" class=\"title\">" + Escape(title) +
         "</text>\n";
  svg += "<rect x=\"" + std::to_string(kLeft) + "\" y=\"" + std::to_string(kTop) + "\" width=\"" +
         Num(pw) + "\" height=\"" + Num(ph) + "\" fill=\"none\" stroke=\"#999\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    const double y = y_max * i / 4, t = t_max * i / 4;
    const std::string label = stall ? Num(100 * y) + "%" : FormatSi(y);
    svg += "<line x1=\"" + std::to_string(kLeft) + "\" x2=\"" + Num(kLeft + pw) + "\" y1=\"" +
           Num(Y(y)) + "\" y2=\"" + Num(Y(y)) + "\" stroke=\"#eee\"/>\n";
    svg += "<text x=\"" + std::to_string(kLeft - 6) + "\" y=\"" + Num(Y(y) + 4) +
           "\" text-anchor=\"end\">" + label + "</text>\n";
    svg += "<text x=\"" + Num(X(t)) + "\" y=\"" + std::to_string(kHeight - kBottom + 16) +
           "\" text-anchor=\"middle\">" + Num(t) + " s</text>\n";
  }
  std::string points;
  for (const BenchSample& s : samples) {
    points += Num(X(s.t_s)) + "," + Num(Y(stall ? s.stall_share : s.tokens_per_s)) + " ";
  }
  svg += "<polyline class=\"series\" fill=\"none\" stroke=\"" + std::string(color) +
         "\" stroke-width=\"3\" points=\"" + points + "\"/>\n";
  for (const BenchSample& s : samples) {
    svg += "<circle cx=\"" + Num(X(s.t_s)) + "\" cy=\"" +
           Num(Y(stall ? s.stall_share : s.tokens_per_s)) + "\" r=\"3\" fill=\"" + color +
           "\"/>\n";
  }
  svg += "<text x=\"" + Num(kLeft + pw / 2) + "\" y=\"" + std::to_string(kHeight - 4) +
         "\" text-anchor=\"middle\">time since measuring began (warm-up excluded)</text>\n";
  return svg + "</svg>\n";
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
  const int row = 34, left = 150, width = kWidth - left - 120;
  const int height = kTop + row * 5 + 10;
  std::string svg = "<svg id=\"plot-stages\" class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" "
                    "width=\"" + std::to_string(kWidth) + "\" height=\"" +
                    std::to_string(height) + "\">\n";
  svg += "<text x=\"10\" y=\"18\" class=\"title\">Time per stage in the measured window "
         "(seconds summed over all threads)</text>\n";
  int y = kTop;
  for (const Bar& b : bars) {
    svg += "<text x=\"" + std::to_string(left - 8) + "\" y=\"" + std::to_string(y + 18) +
           "\" text-anchor=\"end\">" + Escape(b.name) + "</text>\n";
    if (b.applicable) {
      const double w = std::max(3.0, width * b.s / max_s);  // a tiny stage stays visible
      svg += "<rect class=\"bar\" x=\"" + std::to_string(left) + "\" y=\"" +
             std::to_string(y + 4) + "\" width=\"" + Num(w) + "\" height=\"22\" fill=\"" +
             b.color + "\"/>\n";
      svg += "<text x=\"" + Num(left + w + 6) + "\" y=\"" + std::to_string(y + 20) + "\">" +
             Num(b.s) + " s</text>\n";
    } else {
      svg += "<text x=\"" + std::to_string(left) + "\" y=\"" + std::to_string(y + 18) +
             "\">n/a</text>\n";
    }
    y += row;
  }
  return svg + "</svg>\n";
}

}  // namespace

std::string RenderReportHtml(const BenchResult& r, const std::string& title) {
  const std::vector<BenchSample> samples = Downsample(r.timeline);
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>stoker bench: " +
      Escape(title) +
      "</title>\n<style>body{font:14px sans-serif;margin:20px;color:#222;background:#fff}"
      "svg{display:block;margin:12px 0}svg text{font:12px sans-serif;fill:#333}"
      "svg text.title{font-weight:bold;font-size:14px}table{border-collapse:collapse}"
      "td{padding:2px 12px;border-bottom:1px solid #eee}td.v{text-align:right}</style>\n"
      "</head><body>\n<h1>stoker bench</h1>\n<p>" +
      Escape(title) + "</p>\n<p>Warm-up excluded: the first " +
      std::to_string(r.warmup_batches) + " batches are not measured.</p>\n";
  html += LinePlot("plot-throughput", "Delivered tokens/s", samples, false, kThroughputColor);
  html += LinePlot("plot-stall",
                   r.consumer_step_ms > 0
                       ? "Stall: share of time the consumer waited for a batch"
                       : "Stall: share of time in Next() (loader only: the consumer only waits)",
                   samples, true, kStallColor);
  html += StageBars(r);
  html += "<table id=\"figures\">\n";
  for (const Figure& f : BenchFigures(r)) {
    // Shown rounded with units; the exact number stays in data-value for scripts.
    char exact[64] = "";
    if (f.applicable) std::snprintf(exact, sizeof(exact), "%.17g", f.value);
    html += "<tr><td>" + Escape(f.label) + "</td><td class=\"v\" data-key=\"" + f.key +
            "\" data-value=\"" + exact + "\">" + Escape(FormatFigure(f)) + "</td></tr>\n";
  }
  html += "</table>\n</body></html>\n";
  return html;
}

Status WriteReportHtml(const BenchResult& r, const std::string& title, const std::string& path) {
  Status st = WriteFileAtomically(path, RenderReportHtml(r, title));
  if (!st.ok()) return st.WithContext("report " + path);
  return st;
}

}  // namespace stoker::diag
