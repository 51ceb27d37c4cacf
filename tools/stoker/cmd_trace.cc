// `stoker trace`: the lineage of a run at scale (docs/lineage.md). Steps -> documents: every piece
// of every row of every rank for run steps A..B, as a Parquet table; document -> steps: where one
// document was seen. From a run record (or a loader state carrying one), or the plan flags.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "plan/document_skips.h"
#include "plan_flags.h"
#include "records/arrow_sources.h"
#include "run_record.h"
#include "stream_run_record.h"
#include "trace_stream.h"
#include "trace_table.h"

namespace stoker::cli {
namespace {

struct TraceArgs {
  PlanFlags plan;
  std::string run;
  std::string steps;
  std::string document;
  std::string output;
  bool json = false;
  bool quiet = false;
  StreamFlags stream;  // --stream: the DATASET arguments are raw text read by the streaming path
};

// A piece located in its dataset: the shard, the record within it, and the shard's global index
// among every shard path of the run (the shard_path column's dictionary).
struct Located {
  uint64_t shard = 0;
  uint64_t record = 0;
  int64_t shard_path = 0;
};

class ShardIndex {
 public:
  explicit ShardIndex(const OpenedRun& run) {
    for (const RunSegment& seg : run.segments) {
      std::vector<std::vector<int64_t>> per_dataset;
      for (const SegmentDataset& d : seg.datasets) {
        std::vector<int64_t> ids;
        for (const std::string& path : d.shard_paths) ids.push_back(Intern(path));
        per_dataset.push_back(std::move(ids));
      }
      global_.push_back(std::move(per_dataset));
      segments_.push_back(&seg);
    }
  }
  const std::vector<std::string>& paths() const { return paths_; }

  Located Locate(const RunSegment& seg, const RowPiece& piece) const {
    size_t k = 0;
    while (segments_[k] != &seg) ++k;
    const std::vector<uint64_t>& first = seg.datasets[piece.dataset].shard_first_document;
    const uint64_t shard =
        static_cast<uint64_t>(std::upper_bound(first.begin(), first.end(), piece.document) -
                              first.begin()) -
        1;
    const std::vector<int64_t>& ids = global_[k][piece.dataset];
    return {shard, piece.document - first[shard], shard < ids.size() ? ids[shard] : 0};
  }

 private:
  int64_t Intern(const std::string& path) {
    auto [it, added] = index_.emplace(path, static_cast<int64_t>(paths_.size()));
    if (added) paths_.push_back(path);
    return it->second;
  }
  std::vector<std::string> paths_;
  std::unordered_map<std::string, int64_t> index_;
  std::vector<std::vector<std::vector<int64_t>>> global_;  // segment, dataset, shard
  std::vector<const RunSegment*> segments_;
};

// Whether piece `w` of `seg` is the queried document's.
class DocumentFilter {
 public:
  DocumentFilter(const DocumentQuery& q, const OpenedRun& run) : query_(q) {
    for (const RunSegment& seg : run.segments) {
      std::vector<std::optional<uint64_t>> docs;  // per dataset: the document index, if named
      for (size_t d = 0; d < seg.datasets.size(); ++d) {
        docs.push_back(DocumentOf(seg.names[d], seg.datasets[d]));
        if (docs.back()) found_ = true;
      }
      documents_.push_back(std::move(docs));
      segments_.push_back(&seg);
    }
  }
  bool found() const { return found_; }
  bool Matches(const RunSegment& seg, const RowPiece& piece) const {
    size_t k = 0;
    while (segments_[k] != &seg) ++k;
    const std::optional<uint64_t>& doc = documents_[k][piece.dataset];
    return doc && *doc == piece.document;
  }

 private:
  std::optional<uint64_t> DocumentOf(const std::string& name, const SegmentDataset& d) const {
    return DocumentIndexOf(query_, name, d);
  }
  DocumentQuery query_;
  bool found_ = false;
  std::vector<std::vector<std::optional<uint64_t>>> documents_;
  std::vector<const RunSegment*> segments_;
};

// The pieces of the document query held in memory, printed one line each (or one JSON array).
// The trace row of piece `w` of `seg`.
TraceRow RowOf(const ShardIndex& shards, const RunSegment& seg, const WalkedPiece& w) {
  const Located at = shards.Locate(seg, w.piece);
  return {static_cast<int64_t>(w.step),
          static_cast<int64_t>(w.position.epoch),
          static_cast<int64_t>(w.epoch_step),
          w.rank,
          w.row,
          static_cast<int64_t>(w.row_offset),
          static_cast<int64_t>(seg.dataset_name_index[w.piece.dataset]),
          static_cast<int64_t>(at.shard),
          at.shard_path,
          static_cast<int64_t>(at.record),
          static_cast<int64_t>(w.piece.document),
          static_cast<int64_t>(w.piece.offset),
          static_cast<int64_t>(w.piece.length),
          w.dataset_epoch ? static_cast<int64_t>(*w.dataset_epoch) : -1,
          w.phase ? static_cast<int64_t>(*w.phase) : -1,
          w.repeated ? 1 : 0};
}

void PrintHits(const TraceTable& t, bool json) {
  const auto& c = t.columns();
  const size_t n = c[0].size();
  if (json) std::printf("[");
  for (size_t i = 0; i < n; ++i) {
    auto v = [&](int col) { return static_cast<long long>(c[col][i]); };
    if (json) {
      std::printf(
          "%s{\"step\":%lld,\"epoch\":%lld,\"epoch_step\":%lld,\"rank\":%lld,\"row\":%lld,"
          "\"offset\":%lld,\"length\":%lld",
          i ? "," : "", v(kStep), v(kEpoch), v(kEpochStep), v(kRank), v(kRow), v(kOffset),
          v(kLength));
      if (v(kDatasetEpoch) >= 0) std::printf(",\"dataset_epoch\":%lld", v(kDatasetEpoch));
      if (v(kPhase) >= 0) std::printf(",\"phase\":%lld", v(kPhase));
      std::printf("}");
    } else {
      std::printf("step %lld (epoch %lld, step %lld of it) rank %lld row %lld: tokens [%lld, %lld)",
                  v(kStep), v(kEpoch), v(kEpochStep), v(kRank), v(kRow), v(kOffset),
                  v(kOffset) + v(kLength));
      if (v(kDatasetEpoch) >= 0) std::printf(", dataset_epoch %lld", v(kDatasetEpoch));
      if (v(kPhase) >= 0) std::printf(", phase %lld", v(kPhase));
      std::printf("%s\n", v(kRepeated) ? " (repeated)" : "");
    }
  }
  if (json) std::printf("]\n");
}

// After the walk (`st` its status): prints --document's pieces when there is no -o (`hits`),
// closes the table, and removes -o's file on failure.
Status FinishTable(const TraceArgs& a, bool hits, Status st, TraceTable* table) {
  if (hits && st.ok() && a.output.empty()) PrintHits(*table, a.json);
  if (st.ok()) st = table->Close();
  if (!st.ok() && !a.output.empty()) std::remove(a.output.c_str());
  return st;
}

// Steps A..B: --steps, else the run's recorded steps (a run record), else the first epoch.
Result<std::pair<uint64_t, uint64_t>> StepsOf(const TraceArgs& a, const OpenedRun& run) {
  if (!a.steps.empty()) return ParseStepRange(a.steps);
  if (!a.run.empty() && run.recorded_steps > 0)
    return std::make_pair(uint64_t{0}, run.recorded_steps - 1);
  const uint64_t steps = run.segments[0].plan->steps_per_epoch(0);
  if (steps == 0) return InvalidArgument("the plan's first epoch has no step");
  return std::make_pair(uint64_t{0}, steps - 1);
}

// Progress of a stream's replay on stderr, every 256 steps (unless --quiet).
std::function<void(uint64_t)> StreamProgress(const TraceArgs& a) {
  return [quiet = a.quiet](uint64_t done) {
    if (!quiet && done % 256 == 0) {
      std::fprintf(stderr, "stoker trace: %llu steps\n", static_cast<unsigned long long>(done));
    }
  };
}

// A stream's pieces written to -o, or those of --document printed.
int EmitStreamTrace(const TraceArgs& a, Result<StreamTrace> t) {
  if (!t.ok()) return ReportError("trace", t.status());
  TraceTable table(t->names, t->shard_paths);
  std::optional<DocumentQuery> query;
  if (!a.document.empty()) {
    Result<DocumentQuery> q = ParseDocumentQuery(a.document);
    if (!q.ok()) return ReportError("trace", q.status().WithContext("--document"));
    query = *q;
    bool named = false;
    std::string inputs;
    for (const std::string& n : t->names) {
      named = named || SameDocumentName(q->dataset, n);
      inputs += (inputs.empty() ? "" : ", ") + n;
    }
    if (!named) {
      return ReportError("trace", NotFound("--document " + a.document +
                                           ": no input of that "
                                           "name in the steps traced (inputs: " +
                                           inputs + ")"));
    }
  }
  Status st = a.output.empty() ? Status::OK() : table.Open(a.output);
  for (size_t i = 0; st.ok() && i < t->rows.size(); ++i) {
    if (query && !StreamPieceIs(*query, *t, t->rows[i])) continue;
    st = table.Add(t->rows[i]);
  }
  st = FinishTable(a, query.has_value(), st, &table);
  if (!st.ok()) return ReportError("trace", st);
  if (!a.quiet && !a.output.empty()) {
    std::fprintf(stderr, "stoker trace: %llu pieces -> %s\n",
                 static_cast<unsigned long long>(table.rows()), a.output.c_str());
  }
  return kExitOk;
}

// --stream: the pieces from each rank's stream planner, collected, then written.
int RunStreamTrace(TraceArgs& a, const CLI::App& sub) {
  if (!a.run.empty() || !a.plan.mixture.empty()) {
    return ReportError("trace", InvalidArgument("--stream takes the INPUTs and the stream and "
                                                "plan flags (no --run or --mixture: a stream's "
                                                "run record is given to --run alone)"));
  }
  if (a.plan.datasets.empty() || sub.count("--seq-len") == 0 || sub.count("--batch-size") == 0) {
    return ReportError("trace", InvalidArgument("--stream needs the INPUTs, --seq-len and "
                                                "--batch-size, as `stoker explain --stream`"));
  }
  std::pair<uint64_t, uint64_t> steps{0, UINT64_MAX};
  if (!a.steps.empty()) {
    Result<std::pair<uint64_t, uint64_t>> s = ParseStepRange(a.steps);
    if (!s.ok()) return ReportError("trace", s.status());
    steps = *s;
  }
  return EmitStreamTrace(
      a, TraceStreamSteps(a.plan, a.stream, steps.first, steps.second, StreamProgress(a)));
}

// --run of a stoker.Stream's record: every rank's stream replayed over the steps.
int RunStreamRecordTrace(const TraceArgs& a, const OpenedRun& run) {
  std::pair<uint64_t, uint64_t> steps{0, run.recorded_steps - 1};
  if (!a.steps.empty()) {
    Result<std::pair<uint64_t, uint64_t>> s = ParseStepRange(a.steps);
    if (!s.ok()) return ReportError("trace", s.status());
    steps = *s;
  } else if (run.recorded_steps == 0) {
    return ReportError("trace", InvalidArgument("the run record says the run took no step yet: "
                                                "give --steps A..B"));
  }
  if (!a.quiet) {
    std::fprintf(stderr,
                 "stoker trace: replaying the stream of steps %llu..%llu (reading and "
                 "tokenizing its inputs again)\n",
                 static_cast<unsigned long long>(steps.first),
                 static_cast<unsigned long long>(steps.second));
  }
  return EmitStreamTrace(a,
                         TraceStreamRun(*run.stream, steps.first, steps.second, StreamProgress(a)));
}

int RunTrace(TraceArgs& a, const CLI::App& sub) {
  if (Status st = CheckStreamFlagsUse(a.stream); !st.ok()) return ReportError("trace", st);
  if (a.document.empty() && a.output.empty()) {
    return ReportError("trace", InvalidArgument("give -o FILE.parquet (steps -> documents) or "
                                                "--document DATASET:SHARD:RECORD"));
  }
  if (!a.output.empty() && !ArrowReadersAvailable()) {
    // The writer's own error says why (no Arrow in this build, or the module not found).
    Result<std::unique_ptr<ParquetTableWriter>> w = OpenParquetTableWriter(a.output, {});
    return ReportError("trace",
                       Unimplemented("-o writes Parquet through Arrow: " + w.status().message() +
                                     "; --document works without it"));
  }
  if (a.stream.stream) return RunStreamTrace(a, sub);
  Result<OpenedRun> run = OpenRunOrFlags(sub, a.run, &a.plan);
  if (!run.ok()) return ReportError("trace", run.status());
  if (run->stream) return RunStreamRecordTrace(a, *run);
  Result<std::pair<uint64_t, uint64_t>> steps = StepsOf(a, *run);
  if (!steps.ok()) return ReportError("trace", steps.status());
  std::optional<DocumentFilter> filter;
  if (!a.document.empty()) {
    Result<DocumentQuery> q = ParseDocumentQuery(a.document);
    if (!q.ok()) return ReportError("trace", q.status().WithContext("--document"));
    filter.emplace(*q, *run);
    if (!filter->found()) {
      std::string names;
      for (const std::string& n : run->names) names += (names.empty() ? "" : ", ") + n;
      return ReportError("trace", NotFound("--document " + a.document +
                                           ": no such dataset, shard or record in the run "
                                           "(datasets: " +
                                           names + ")"));
    }
  }
  const ShardIndex shards(*run);
  TraceTable table(run->names, shards.paths());
  if (!a.output.empty()) {
    if (Status st = table.Open(a.output); !st.ok()) return ReportError("trace", st);
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto last_report = t0;
  const uint64_t total = steps->second - steps->first + 1;
  auto progress = [&](uint64_t done) {
    const auto now = std::chrono::steady_clock::now();
    if (a.quiet || now - last_report < std::chrono::seconds(2)) return;
    last_report = now;
    const double s = std::chrono::duration<double>(now - t0).count();
    std::fprintf(stderr, "stoker trace: %llu of %llu steps, %llu pieces, %.0f steps/s\n",
                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
                 static_cast<unsigned long long>(table.rows()), done / s);
  };
  Status st = WalkRun(
      *run, steps->first, steps->second,
      [&](const RunSegment& seg, const WalkedPiece& w) {
        if (filter && !filter->Matches(seg, w.piece)) return Status::OK();
        return table.Add(RowOf(shards, seg, w));
      },
      progress);
  st = FinishTable(a, filter.has_value(), st, &table);
  if (!st.ok()) return ReportError("trace", st);
  if (!a.quiet && !a.output.empty()) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "stoker trace: steps %llu..%llu: %llu pieces -> %s (%.1f s)\n",
                 static_cast<unsigned long long>(steps->first),
                 static_cast<unsigned long long>(steps->second),
                 static_cast<unsigned long long>(table.rows()), a.output.c_str(), s);
  }
  return kExitOk;
}

}  // namespace

void AddTraceCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<TraceArgs>();
  auto* sub = app.add_subcommand(
      "trace", "Which documents steps A..B saw (to Parquet), or which steps saw a document");
  sub->footer(
      "The run: --run FILE, a run record or a checkpoint (loader state) that carries one\n"
      "(Loader.state_dict()[\"run_record\"]; every plan the run used, with the step it started\n"
      "at: world-size changes and mixture edits included), or the datasets and plan flags as\n"
      "`stoker explain` takes them (one plan from step 0).\n"
      "Steps -> documents: -o FILE.parquet, one row per document piece: step (the run's step),\n"
      "epoch, epoch_step, rank, row, row_offset, dataset, shard, shard_path, record (in the\n"
      "shard), document (in the dataset), offset, length (tokens [offset, offset+length) of the\n"
      "document), dataset_epoch, phase (mixtures), repeated. Needs a build with Arrow.\n"
      "Document -> steps: --document DATASET:SHARD:RECORD prints every piece of that document\n"
      "in the steps (SHARD: its number or its file; RECORD: its index in the shard).\n"
      "--steps A..B: both included; default: the steps the record says the run took (else the\n"
      "first epoch). See docs/lineage.md.\n"
      "--stream: the DATASET arguments are raw text read by the streaming path (the stream flags\n"
      "of `stoker explain --stream`), every rank's planner replayed step by step (reading and\n"
      "tokenizing again); --run of a stoker.Stream's record replays it the same way.\n"
      "Example: stoker trace --run ckpt/loader_state.json --steps 120000..121500 -o spike.parquet");
  AddPlanFlags(sub, &args->plan, PlanFlagsUse::kLoader);
  sub->add_option("--run", args->run,
                  "A run record, or a loader state with one (instead of datasets and plan flags)")
      ->check(CLI::ExistingFile);
  sub->add_option("--steps", args->steps, "Run steps A..B (both included), or one step K");
  sub->add_option("--document", args->document,
                  "DATASET:SHARD:RECORD: the steps, ranks and rows that saw this document");
  sub->add_option("-o,--output", args->output, "The Parquet file to write")->transform(LocalFile());
  sub->add_flag("--json", args->json, "--document: one JSON array");
  sub->add_flag("-q,--quiet", args->quiet, "No progress on stderr");
  AddStreamFlags(sub, &args->stream);
  sub->callback([args, exit_code, sub] { *exit_code = RunTrace(*args, *sub); });
}

}  // namespace stoker::cli
