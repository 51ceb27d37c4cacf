#include "trace_table.h"

namespace stoker::cli {
namespace {

constexpr const char* kTraceColumnNames[kNumTraceColumns] = {
    "step",    "epoch",         "epoch_step", "rank",    "row",      "row_offset",
    "dataset", "shard",         "shard_path", "record",  "document", "offset",
    "length",  "dataset_epoch", "phase",      "repeated"};
constexpr size_t kRowGroupRows = size_t{1} << 18;

}  // namespace

TraceTable::TraceTable(std::vector<std::string> names, std::vector<std::string> shard_paths)
    : names_(std::move(names)), shard_paths_(std::move(shard_paths)) {
  columns_.resize(kNumTraceColumns);
  writing_.resize(kNumTraceColumns);
}

TraceTable::~TraceTable() { (void)Wait(); }

Status TraceTable::Open(const std::string& path) {
  std::vector<ParquetColumnSpec> specs;
  for (int c = 0; c < kNumTraceColumns; ++c) {
    ParquetColumnSpec spec;
    spec.name = kTraceColumnNames[c];
    if (c == kDataset) spec.dictionary = names_;
    if (c == kShardPath) spec.dictionary = shard_paths_;
    spec.nullable = c == kDatasetEpoch || c == kPhase;
    // Every integer column delta-encoded: less encoding CPU than a dictionary (a hash per value)
    // or plain values through Snappy, and a 21% smaller file (bench/RESULTS.md, "Trace"). Min/max
    // only where a reader's filter prunes row groups: steps, epochs, ranks and the names.
    spec.delta = spec.dictionary.empty();
    spec.statistics = c == kStep || c == kEpoch || c == kRank || !spec.dictionary.empty();
    specs.push_back(std::move(spec));
  }
  STOKER_ASSIGN_OR_RETURN(writer_, OpenParquetTableWriter(path, specs));
  for (int c = 0; c < kNumTraceColumns; ++c) {
    columns_[c].reserve(kRowGroupRows);
    writing_[c].reserve(kRowGroupRows);
  }
  return Status::OK();
}

Status TraceTable::Add(const TraceRow& row) {
  for (int c = 0; c < kNumTraceColumns; ++c) columns_[c].push_back(row[c]);
  ++rows_;
  if (writer_ != nullptr && columns_[0].size() >= kRowGroupRows) return Flush();
  return Status::OK();
}

// Hands the full columns to a writer thread (one row group at a time, in order) and goes on
// filling the other set: the walk and the Parquet encoding overlap.
Status TraceTable::Flush() {
  if (writer_ == nullptr || columns_[0].empty()) return Status::OK();
  STOKER_RETURN_IF_ERROR(Wait());
  writing_.swap(columns_);
  for (auto& c : columns_) c.clear();
  pending_ = std::async(std::launch::async, [this] { return writer_->WriteRowGroup(writing_); });
  return Status::OK();
}

Status TraceTable::Close() {
  STOKER_RETURN_IF_ERROR(Flush());
  STOKER_RETURN_IF_ERROR(Wait());
  return writer_ != nullptr ? writer_->Close() : Status::OK();
}

Status TraceTable::Wait() { return pending_.valid() ? pending_.get() : Status::OK(); }

}  // namespace stoker::cli
