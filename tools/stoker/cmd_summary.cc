// `stoker summary`: the tokens a run actually consumed per source and per schedule phase up to a
// step (docs/lineage.md), counted from the plan's rows (not the configured weights): text, JSON,
// or a self-contained HTML page with an inline SVG chart.
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "number_flags.h"
#include "plan_flags.h"
#include "run_record.h"
#include "stream_run_record.h"

namespace stoker::cli {
namespace {

struct SummaryArgs {
  PlanFlags plan;
  std::string run;
  std::optional<uint64_t> until_step;
  bool json = false;
  std::string html;
  bool quiet = false;
};

using SourceCount = DatasetTokenCounts;

struct PhaseCount {
  uint64_t rows = 0;
  uint64_t capacity = 0;             // rows * seq_len
  std::vector<SourceCount> sources;  // by OpenedRun::names
};

struct Summary {
  uint64_t steps = 0;
  std::vector<std::string> names;
  std::map<int64_t, PhaseCount> phases;  // -1: no schedule
};

// Each segment's steps below `steps`, counted by CountPlanSteps in chunks (for the progress), and
// merged by dataset name.
Result<Summary> Count(const OpenedRun& run, uint64_t steps, bool quiet) {
  Summary s;
  s.steps = steps;
  s.names = run.names;
  uint64_t done = 0;
  for (const RunSegment& seg : run.segments) {
    if (seg.first_step >= steps) break;
    const uint64_t end = std::min(seg.end_step, steps);
    const bool phases = !seg.plan->options().phases.empty() && seg.plan->num_datasets() > 1;
    PlanPosition pos = seg.start;
    for (uint64_t at = seg.first_step; at < end;) {
      const uint64_t n = std::min<uint64_t>(end - at, 4096);
      STOKER_ASSIGN_OR_RETURN(auto counts, CountPlanSteps(*seg.plan, pos, n, seg.skips.get()));
      for (const auto& [phase, c] : counts) {
        PhaseCount& p = s.phases[phases ? static_cast<int64_t>(phase) : -1];
        if (p.sources.empty()) p.sources.resize(s.names.size());
        p.rows += c.rows;
        p.capacity += c.rows * seg.plan->options().seq_len;
        for (size_t d = 0; d < c.datasets.size(); ++d) {
          SourceCount& to = p.sources[seg.dataset_name_index[d]];
          to.tokens += c.datasets[d].tokens;
          to.documents += c.datasets[d].documents;
          to.pieces += c.datasets[d].pieces;
          to.repeated_tokens += c.datasets[d].repeated_tokens;
        }
      }
      pos = AdvanceSteps(*seg.plan, pos, n);
      at += n;
      done += n;
      if (!quiet && at < end) {
        std::fprintf(stderr, "stoker summary: %llu of %llu steps\n",
                     static_cast<unsigned long long>(done), static_cast<unsigned long long>(steps));
      }
    }
  }
  return s;
}

// A stoker.Stream's record: every rank's stream replayed over steps 0..steps-1 (reading and
// tokenizing), its pieces counted by input file. One phase (a stream has no schedule).
Result<Summary> CountStream(const OpenedRun& run, uint64_t steps, bool quiet) {
  Summary s;
  s.steps = steps;
  if (steps == 0) return s;
  if (!quiet) {
    std::fprintf(stderr,
                 "stoker summary: replaying the stream of %llu steps (reading and "
                 "tokenizing its inputs again)\n",
                 static_cast<unsigned long long>(steps));
  }
  STOKER_ASSIGN_OR_RETURN(StreamTrace t,
                          TraceStreamRun(*run.stream, 0, steps - 1, [&](uint64_t done) {
                            if (!quiet && done % 256 == 0) {
                              std::fprintf(stderr, "stoker summary: %llu of %llu steps\n",
                                           static_cast<unsigned long long>(done),
                                           static_cast<unsigned long long>(steps));
                            }
                          }));
  s.names = t.names;
  PhaseCount& p = s.phases[-1];
  p.sources.resize(s.names.size());
  for (const StreamRunSegment& seg : run.stream->segments) {
    if (seg.first_step >= steps) break;
    const uint64_t n = std::min(seg.end_step, steps) - seg.first_step;
    const uint64_t rows = n * seg.plan.options.batch_size * seg.plan.options.world_size;
    p.rows += rows;
    p.capacity += rows * seg.plan.options.seq_len;
  }
  for (const TraceRow& row : t.rows) {
    SourceCount& c = p.sources[row[kDataset]];
    c.tokens += row[kLength];
    c.documents += row[kOffset] == 0 ? 1 : 0;
    c.pieces += 1;
    c.repeated_tokens += row[kRepeated] ? row[kLength] : 0;
  }
  return s;
}

nlohmann::ordered_json SourcesJson(const std::vector<std::string>& names,
                                   const std::vector<SourceCount>& counts) {
  uint64_t total = 0;
  for (const SourceCount& c : counts) total += c.tokens;
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (size_t k = 0; k < names.size(); ++k) {
    const SourceCount& c = k < counts.size() ? counts[k] : SourceCount{};
    out.push_back({{"name", names[k]},
                   {"tokens", c.tokens},
                   {"share", total ? static_cast<double>(c.tokens) / total : 0.0},
                   {"documents", c.documents},
                   {"pieces", c.pieces},
                   {"repeated_tokens", c.repeated_tokens}});
  }
  return out;
}

nlohmann::ordered_json SummaryJson(const Summary& s) {
  std::vector<SourceCount> all(s.names.size());
  uint64_t rows = 0, capacity = 0;
  nlohmann::ordered_json phases = nlohmann::ordered_json::array();
  for (const auto& [phase, p] : s.phases) {
    rows += p.rows;
    capacity += p.capacity;
    uint64_t tokens = 0;
    for (size_t k = 0; k < p.sources.size(); ++k) {
      all[k].tokens += p.sources[k].tokens;
      all[k].documents += p.sources[k].documents;
      all[k].pieces += p.sources[k].pieces;
      all[k].repeated_tokens += p.sources[k].repeated_tokens;
      tokens += p.sources[k].tokens;
    }
    phases.push_back(
        {{"phase", phase < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(phase)},
         {"rows", p.rows},
         {"tokens", tokens},
         {"padding_tokens", p.capacity - tokens},
         {"sources", SourcesJson(s.names, p.sources)}});
  }
  uint64_t tokens = 0;
  for (const SourceCount& c : all) tokens += c.tokens;
  nlohmann::ordered_json out;
  out["format"] = "stoker-summary";
  out["version"] = 1;
  out["until_step"] = s.steps;
  out["steps"] = s.steps;
  out["rows"] = rows;
  out["tokens"] = tokens;
  out["padding_tokens"] = capacity - tokens;
  out["sources"] = SourcesJson(s.names, all);
  out["phases"] = std::move(phases);
  return out;
}

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Format(const char* fmt, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, a);
  return buf;
}

// One horizontal stacked bar per line (the whole run, then each phase), segments by source.
std::string Chart(const nlohmann::ordered_json& j) {
  static const char* kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                  "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  std::vector<std::pair<std::string, const nlohmann::ordered_json*>> bars = {
      {"whole run", &j["sources"]}};
  for (const auto& p : j["phases"]) {
    if (!p["phase"].is_null()) {
      bars.emplace_back("phase " + p["phase"].dump(), &p["sources"]);
    }
  }
  const int width = 640, left = 90, bar = 26, gap = 10;
  const int height = static_cast<int>(bars.size()) * (bar + gap) + 40;
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    std::to_string(width + left + 10) + "\" height=\"" + std::to_string(height) +
                    "\" role=\"img\" aria-label=\"consumed tokens per source\">\n";
  int y = 10;
  for (const auto& [label, sources] : bars) {
    svg += "<text x=\"0\" y=\"" + std::to_string(y + bar - 8) + "\" font-size=\"13\">" +
           Escape(label) + "</text>\n";
    double x = left;
    size_t k = 0;
    for (const auto& src : *sources) {
      const double w = src["share"].get<double>() * width;
      if (w > 0) {
        svg += "<rect x=\"" + Format("%.2f", x) + "\" y=\"" + std::to_string(y) + "\" width=\"" +
               Format("%.2f", w) + "\" height=\"" + std::to_string(bar) + "\" fill=\"" +
               kColors[k % 10] + "\"><title>" + Escape(src["name"].get<std::string>()) + ": " +
               Format("%.2f%%", 100 * src["share"].get<double>()) + "</title></rect>\n";
      }
      x += w;
      ++k;
    }
    y += bar + gap;
  }
  // The legend.
  size_t k = 0;
  int lx = left;
  for (const auto& src : j["sources"]) {
    svg += "<rect x=\"" + std::to_string(lx) + "\" y=\"" + std::to_string(y) +
           "\" width=\"12\" height=\"12\" fill=\"" + kColors[k % 10] + "\"/><text x=\"" +
           std::to_string(lx + 16) + "\" y=\"" + std::to_string(y + 11) + "\" font-size=\"12\">" +
           Escape(src["name"].get<std::string>()) + "</text>\n";
    lx += 30 + 7 * static_cast<int>(std::min<size_t>(src["name"].get<std::string>().size(), 40));
    ++k;
  }
  return svg + "</svg>\n";
}

std::string Html(const nlohmann::ordered_json& j) {
  std::string rows;
  for (const auto& src : j["sources"]) {
    rows += "<tr><td>" + Escape(src["name"].get<std::string>()) + "</td><td>" +
            std::to_string(src["tokens"].get<uint64_t>()) + "</td><td>" +
            Format("%.2f%%", 100 * src["share"].get<double>()) + "</td><td>" +
            std::to_string(src["documents"].get<uint64_t>()) + "</td></tr>\n";
  }
  std::string phases;
  for (const auto& p : j["phases"]) {
    if (p["phase"].is_null()) continue;
    phases += "<h3>Phase " + p["phase"].dump() + ": " +
              std::to_string(p["tokens"].get<uint64_t>()) +
              " tokens</h3>\n<table><tr><th>source"
              "</th><th>tokens</th><th>share</th></tr>\n";
    for (const auto& src : p["sources"]) {
      phases += "<tr><td>" + Escape(src["name"].get<std::string>()) + "</td><td>" +
                std::to_string(src["tokens"].get<uint64_t>()) + "</td><td>" +
                Format("%.2f%%", 100 * src["share"].get<double>()) + "</td></tr>\n";
    }
    phases += "</table>\n";
  }
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Training data summary"
         "</title>\n<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
         "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td:first-child{text-align:"
         "left}</style></head><body>\n<h1>Training data: tokens consumed per source</h1>\n<p>"
         "Steps 0 to " +
         std::to_string(j["until_step"].get<uint64_t>()) +
         " (excluded): " + std::to_string(j["tokens"].get<uint64_t>()) + " tokens in " +
         std::to_string(j["rows"].get<uint64_t>()) + " rows (" +
         std::to_string(j["padding_tokens"].get<uint64_t>()) +
         " padding), counted from the plan's rows by <code>stoker summary</code>, not from the "
         "configured weights.</p>\n" +
         Chart(j) +
         "<table><tr><th>source</th><th>tokens</th><th>share</th><th>documents started</th>"
         "</tr>\n" +
         rows + "</table>\n" + phases + "</body></html>\n";
}

void PrintText(const nlohmann::ordered_json& j) {
  std::printf("steps 0..%llu (excluded): %llu tokens, %llu rows, %llu padding tokens\n",
              static_cast<unsigned long long>(j["until_step"].get<uint64_t>()),
              static_cast<unsigned long long>(j["tokens"].get<uint64_t>()),
              static_cast<unsigned long long>(j["rows"].get<uint64_t>()),
              static_cast<unsigned long long>(j["padding_tokens"].get<uint64_t>()));
  auto print = [](const nlohmann::ordered_json& sources, const char* indent) {
    for (const auto& src : sources) {
      std::printf("%s%-30s %15llu tokens %7.3f%% %10llu documents\n", indent,
                  src["name"].get<std::string>().c_str(),
                  static_cast<unsigned long long>(src["tokens"].get<uint64_t>()),
                  100 * src["share"].get<double>(),
                  static_cast<unsigned long long>(src["documents"].get<uint64_t>()));
    }
  };
  print(j["sources"], "  ");
  for (const auto& p : j["phases"]) {
    if (p["phase"].is_null()) continue;
    std::printf("phase %s: %llu tokens\n", p["phase"].dump().c_str(),
                static_cast<unsigned long long>(p["tokens"].get<uint64_t>()));
    print(p["sources"], "    ");
  }
}

int RunSummary(SummaryArgs& a, const CLI::App& sub) {
  Result<OpenedRun> run = OpenRunOrFlags(sub, a.run, &a.plan);
  if (!run.ok()) return ReportError("summary", run.status());
  uint64_t steps = a.until_step ? *a.until_step : run->recorded_steps;
  if (!a.until_step && a.run.empty()) steps = run->segments[0].plan->steps_per_epoch(0);
  Result<Summary> s = run->stream ? CountStream(*run, steps, a.quiet) : Count(*run, steps, a.quiet);
  if (!s.ok()) return ReportError("summary", s.status());
  const nlohmann::ordered_json j = SummaryJson(*s);
  if (!a.html.empty()) {
    std::ofstream out(a.html);
    out << Html(j);
    if (!out.good()) return ReportError("summary", IOError(a.html + ": cannot write"));
  }
  if (a.json) {
    std::printf("%s\n", j.dump().c_str());
  } else if (a.html.empty()) {
    PrintText(j);
  }
  return kExitOk;
}

}  // namespace

void AddSummaryCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<SummaryArgs>();
  auto* sub = app.add_subcommand(
      "summary", "Tokens a run consumed per source and phase up to a step (JSON, HTML)");
  sub->footer(
      "Counts the plan's rows of run steps 0 .. N-1 (every rank): tokens, documents started and\n"
      "padding per source and per schedule phase, as consumed (not the configured weights).\n"
      "The run: --run FILE (a run record or a checkpoint with one) or the datasets and plan\n"
      "flags (as `stoker trace`). --until-step N defaults to the steps the record says the run\n"
      "took (else the first epoch). A stoker.Stream's record is replayed (its inputs read and\n"
      "tokenized again), counted per input file. See docs/lineage.md.\n"
      "Example: stoker summary --run ckpt.json --until-step 500000 --html summary.html");
  AddPlanFlags(sub, &args->plan, PlanFlagsUse::kLoader);
  sub->add_option("--run", args->run, "A run record, or a loader state with one")
      ->check(CLI::ExistingFile);
  sub->add_option("--until-step", args->until_step, "Count steps 0 .. N-1")
      ->check(WholeNumber<uint64_t>());
  sub->add_flag("--json", args->json, "One JSON object on stdout");
  sub->add_option("--html", args->html, "Write a self-contained HTML page (inline SVG chart)")
      ->transform(LocalFile());
  sub->add_flag("-q,--quiet", args->quiet, "No progress on stderr");
  sub->callback([args, exit_code, sub] { *exit_code = RunSummary(*args, *sub); });
}

}  // namespace stoker::cli
