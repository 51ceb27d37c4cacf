#include "stream_run_record.h"

#include <algorithm>
#include <optional>

#include "run_record.h"
#include "stream/stream_options_table.h"
#include "text/tokenizer_options_table.h"

namespace stoker::cli {
namespace {

using Json = nlohmann::json;

Result<StreamRunSegment> ReadSegment(const Json& s, const std::string& where) {
  StreamRunSegment seg;
  if (!s.is_object() || !s.contains("stream") || !s["stream"].is_object()) {
    return InvalidArgument(where + ": not a stream segment (no \"stream\" object)");
  }
  if (!s.contains("step") || !s["step"].is_number_unsigned()) {
    return InvalidArgument(where + ": 'step' must be an integer >= 0");
  }
  seg.first_step = s["step"].get<uint64_t>();
  STOKER_RETURN_IF_ERROR(ReadRecordedOptions(s.value("options", Json::object()), where, &seg.plan));
  const Json& st = s["stream"];
  const Json& inputs = st.value("inputs", Json::array());
  if (!inputs.is_array() || inputs.empty()) return InvalidArgument(where + ": no stream inputs");
  for (const Json& in : inputs) {
    if (!in.is_string()) return InvalidArgument(where + ": each stream input must be a string");
    seg.plan.datasets.push_back(in.get<std::string>());
  }
  STOKER_RETURN_IF_ERROR(SetRecordedRows(stream::StreamOptionTable(),
                                         st.value("options", Json::object()),
                                         where + ": stream options", &seg.stream.options));
  STOKER_RETURN_IF_ERROR(
      SetRecordedRows(TokenizerOptionTable(), st.value("tokenizer_options", Json::object()),
                      where + ": tokenizer options", &seg.stream.options.tokenizer_options));
  // The record keeps the directory the loader used; "" is no scan cache (scan_cache=None).
  seg.stream.no_scan_cache = seg.stream.options.scan_cache_dir.empty();
  seg.stream.on_error = st.value("on_error", std::string("fail"));
  seg.stream.stream = true;
  const Json& resume = s.value("resume", Json());
  if (resume.is_object()) {
    const uint64_t batch = seg.plan.options.batch_size * seg.plan.options.world_size;
    const uint64_t rows = resume.value("rows_consumed", uint64_t{0});
    if (batch == 0 || rows % batch != 0) {
      return InvalidArgument(where + ": resume at row " + std::to_string(rows) +
                             ", not a step boundary of " + std::to_string(batch) + " rows");
    }
    seg.start = {seg.first_step, resume.value("epoch", uint64_t{0}), rows / batch};
    seg.elastic = resume.value("elastic", false);
  } else {
    seg.start = {seg.first_step, 0, 0};
  }
  seg.start.fingerprint = s.value("fingerprint", std::string());
  return seg;
}

}  // namespace

bool StreamPieceIs(const DocumentQuery& q, const StreamTrace& t, const TraceRow& row) {
  if (static_cast<uint64_t>(row[kRecord]) != q.record ||
      !SameDocumentName(q.dataset, t.names[row[kDataset]])) {
    return false;
  }
  if (!q.shard.empty() && q.shard.size() < 19 &&
      q.shard.find_first_not_of("0123456789") == std::string::npos) {
    return static_cast<uint64_t>(row[kShard]) == std::stoull(q.shard);
  }
  return SameDocumentName(q.shard, t.shard_paths[row[kShardPath]]);
}

bool IsStreamRecord(const Json& record) {
  const Json& segments = record.value("segments", Json::array());
  return segments.is_array() && !segments.empty() && segments[0].is_object() &&
         segments[0].contains("stream");
}

Result<StreamRun> ReadStreamRunRecord(const Json& record, const std::string& path) {
  StreamRun run;
  const Json& segments = record["segments"];
  for (size_t k = 0; k < segments.size(); ++k) {
    const std::string where = path + ": segment " + std::to_string(k);
    STOKER_ASSIGN_OR_RETURN(StreamRunSegment seg, ReadSegment(segments[k], where));
    if (!run.segments.empty()) {
      if (seg.first_step < run.segments.back().first_step) {
        return InvalidArgument(where + ": its step " + std::to_string(seg.first_step) +
                               " is before the previous segment's");
      }
      run.segments.back().end_step = seg.first_step;
    }
    run.segments.push_back(std::move(seg));
  }
  return run;
}

namespace {

// The world of segment `seg`, its planners restored after an elastic resume from `old` (the
// previous segment's world, opened by the caller): every old rank's state at the resume step, as
// the run's loaders saved them, dealt to the new ranks as their load_state_dict dealt them.
Result<StreamWorld> OpenSegmentWorld(const StreamRunSegment& seg, const StreamWorld* old,
                                     const StreamRunSegment* old_seg) {
  STOKER_ASSIGN_OR_RETURN(StreamWorld world,
                          OpenStreamWorld(seg.plan, seg.stream, seg.start.fingerprint));
  if (!seg.elastic) return world;
  if (old == nullptr) {
    return FailedPrecondition(
        "steps from " + std::to_string(seg.first_step) +
        " of this stream run followed a resume on another world size, and the record has no "
        "segment before it to take the old ranks' states from (the run was resumed from a "
        "checkpoint without a run record): trace from the next set_epoch on");
  }
  STOKER_ASSIGN_OR_RETURN(const PlanPosition at,
                          StreamPositionOf(*old, old_seg->start, seg.first_step));
  std::vector<PlanState> states;
  for (const auto& p : old->planners) states.push_back(p->MakeState(at));
  for (const auto& p : world.planners) {
    STOKER_ASSIGN_OR_RETURN(PlanState st, p->ElasticState(states));
    STOKER_ASSIGN_OR_RETURN(PlanPosition pos, p->RestorePosition(st));
    const uint64_t batch = world.options.batch_size * world.options.world_size;
    if (pos.epoch != seg.start.epoch || pos.rows_consumed != seg.start.epoch_step * batch) {
      return FailedPrecondition(
          "the elastic resume at step " + std::to_string(seg.first_step) + " replayed to epoch " +
          std::to_string(pos.epoch) + " row " + std::to_string(pos.rows_consumed) +
          ", the run record says epoch " + std::to_string(seg.start.epoch) + " row " +
          std::to_string(seg.start.epoch_step * batch) + ": the record is not this run's");
    }
  }
  return world;
}

}  // namespace

Result<StreamTrace> TraceStreamRun(const StreamRun& run, uint64_t first, uint64_t last,
                                   const std::function<void(uint64_t)>& progress) {
  const std::vector<StreamRunSegment>& segs = run.segments;
  // Which segments' worlds are opened: those with steps traced, and before an elastic one that
  // is opened, the one it resumed from (its ranks' states at the resume).
  std::vector<bool> needed(segs.size(), false);
  for (size_t k = segs.size(); k-- > 0;) {
    needed[k] = (first <= last && first < segs[k].end_step && segs[k].first_step <= last) ||
                (k + 1 < segs.size() && needed[k + 1] && segs[k + 1].elastic);
  }
  StreamTrace out;
  StringIndex names, shard_paths;
  uint64_t done = 0;
  std::optional<StreamWorld> prev;  // the world of segment k - 1, when it was needed
  for (size_t k = 0; k < segs.size(); ++k) {
    const StreamRunSegment& seg = segs[k];
    if (!needed[k]) {
      prev.reset();
      continue;
    }
    STOKER_ASSIGN_OR_RETURN(StreamWorld world, OpenSegmentWorld(seg, prev ? &*prev : nullptr,
                                                                k > 0 ? &segs[k - 1] : nullptr));
    if (first <= last && first < seg.end_step && seg.first_step <= first) {
      const uint64_t end = std::min(seg.end_step - 1, last);
      STOKER_ASSIGN_OR_RETURN(StreamTrace t, TraceStreamWorld(
                                                 world, first, end,
                                                 [&](uint64_t n) {
                                                   if (progress) progress(done + n);
                                                 },
                                                 seg.start));
      for (TraceRow& row : t.rows) {
        row[kDataset] = names.Index(t.names[row[kDataset]]);
        row[kShardPath] = shard_paths.Index(t.shard_paths[row[kShardPath]]);
        out.rows.push_back(row);
      }
      done += end - first + 1;
      first = end + 1;
    }
    prev = std::move(world);
  }
  out.names = names.Take();
  out.shard_paths = shard_paths.Take();
  return out;
}

}  // namespace stoker::cli
