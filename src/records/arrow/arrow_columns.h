// Rows of Arrow record batches as stoker Records (the column -> field mapping of
// records/arrow_sources.h), and integer-list columns as flat token arrays. Shared by the Parquet
// and the Arrow IPC readers. Not thread-safe: one user at a time.
#pragma once

#include <arrow/record_batch.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "records/arrow_sources.h"
#include "records/record.h"

namespace stoker {

// Walks the rows of the batches that `next_batch` yields (nullptr at the end) and turns each into
// a Record. `source` names the file in records and errors; `first_row` is the file row number of
// the first row (the key of a record is its file row number).
class ArrowRowReader {
 public:
  using NextBatch = std::function<Result<std::shared_ptr<arrow::RecordBatch>>()>;
  ArrowRowReader(std::string source, uint64_t first_row, uint64_t offset_bytes,
                 NextBatch next_batch)
      : source_(std::move(source)),
        next_row_(first_row),
        offset_bytes_(offset_bytes),
        next_batch_(std::move(next_batch)) {}

  // The next row, or std::nullopt after the last batch.
  Result<std::optional<Record>> Next();

 private:
  enum class Kind { kSkip, kString, kBytes, kInt, kFloat, kIntList, kFloatList, kJson };
  Status Plan(const arrow::Schema& schema);
  void AppendField(int column, int64_t row, std::vector<Field>* fields) const;

  std::string source_;
  uint64_t next_row_;
  uint64_t offset_bytes_;
  NextBatch next_batch_;
  std::shared_ptr<arrow::RecordBatch> batch_;
  int64_t row_in_batch_ = 0;
  uint64_t index_ = 0;
  std::vector<Kind> kinds_;  // per column, from the first batch's schema
};

// Appends the integer-list values of `column` (a List/LargeList/FixedSizeList of integers, in
// one or more chunks) to `out`, one row at a time. `where` names the file and column in errors.
Status AppendTokenColumn(const arrow::Array& column, const std::string& where, TokenColumn* out);

}  // namespace stoker
