// The table `stoker trace` writes (docs/lineage.md): one row per document piece, as int64 columns
// (dataset and shard_path as dictionary strings), to Parquet through the Arrow module. Not
// thread-safe: one user; while a row group is written, a second thread (the writer's only user)
// encodes it.
#pragma once

#include <array>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "records/arrow_sources.h"
#include "stoker/status.h"

namespace stoker::cli {

// The table's columns, in order.
enum TraceColumn {
  kStep,
  kEpoch,
  kEpochStep,
  kRank,
  kRow,
  kRowOffset,
  kDataset,  // index into the table's names
  kShard,
  kShardPath,  // index into the table's shard paths
  kRecord,
  kDocument,
  kOffset,
  kLength,
  kDatasetEpoch,  // -1: null
  kPhase,         // -1: null
  kRepeated,
  kNumTraceColumns
};
using TraceRow = std::array<int64_t, kNumTraceColumns>;

class TraceTable {
 public:
  // The dictionaries of the dataset and shard_path columns.
  TraceTable(std::vector<std::string> names, std::vector<std::string> shard_paths);
  ~TraceTable();
  // Writes to the Parquet file `path` from now on (without it the rows stay in columns()).
  Status Open(const std::string& path);
  Status Add(const TraceRow& row);
  // Writes what is left and the footer.
  Status Close();
  uint64_t rows() const { return rows_; }
  // The rows not yet written (all of them when not Open).
  const std::vector<std::vector<int64_t>>& columns() const { return columns_; }

 private:
  Status Flush();
  Status Wait();

  std::vector<std::string> names_, shard_paths_;
  std::unique_ptr<ParquetTableWriter> writer_;
  std::vector<std::vector<int64_t>> columns_;  // filled by Add
  std::vector<std::vector<int64_t>> writing_;  // the row group the writer thread writes
  std::future<Status> pending_;
  uint64_t rows_ = 0;
};

}  // namespace stoker::cli
