#include "stream_run_record.h"

#include <algorithm>

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

Result<StreamTrace> TraceStreamRun(const StreamRun& run, uint64_t first, uint64_t last,
                                   const std::function<void(uint64_t)>& progress) {
  StreamTrace out;
  StringIndex names, shard_paths;
  uint64_t done = 0;
  for (const StreamRunSegment& seg : run.segments) {
    if (first > last) break;
    if (first >= seg.end_step) continue;
    const uint64_t end = std::min(seg.end_step - 1, last);
    if (seg.elastic) {
      return FailedPrecondition(
          "steps " + std::to_string(seg.first_step) + ".." +
          (seg.end_step == UINT64_MAX ? std::string("") : std::to_string(seg.end_step - 1)) +
          " of this stream run followed a resume on another world size, which dealt the old "
          "ranks' documents again: they are not replayed; trace the steps before " +
          std::to_string(seg.first_step) + ", or from the next set_epoch on");
    }
    STOKER_ASSIGN_OR_RETURN(StreamTrace t, TraceStreamSteps(
                                               seg.plan, seg.stream, first, end,
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
  out.names = names.Take();
  out.shard_paths = shard_paths.Take();
  return out;
}

}  // namespace stoker::cli
