// ReadArrowTokenColumn: one integer-list column of a Parquet or Arrow IPC file as a flat token
// array, for the indexed path's TokenSource (format/arrow_token_source.h).
#include <arrow/ipc/reader.h>
#include <arrow/record_batch.h>
#include <arrow/table.h>
#include <parquet/arrow/reader.h>
#include <parquet/file_reader.h>

#include "records/arrow/arrow_byte_file.h"
#include "records/arrow/arrow_columns.h"
#include "records/arrow/arrow_module.h"

namespace stoker {
namespace {

Status MissingColumn(const std::string& path, const std::string& column,
                     const arrow::Schema& schema) {
  std::string names;
  for (const auto& f : schema.fields()) names += (names.empty() ? "" : ", ") + f->name();
  return InvalidArgument(path + ": no column '" + column + "' (columns: " + names + ")");
}

Status ReadParquetColumn(std::shared_ptr<const ByteSource> source, const std::string& column,
                         TokenColumn* out) {
  const std::string path = source->uri();
  auto file = std::make_shared<ArrowByteFile>(std::move(source));
  try {
    auto reader = parquet::arrow::OpenFile(file, arrow::default_memory_pool());
    if (!reader.ok()) return FromArrow(reader.status(), path + ": Parquet footer");
    std::shared_ptr<arrow::Schema> schema;
    arrow::Status s = (*reader)->GetSchema(&schema);
    if (!s.ok()) return FromArrow(s, path + ": Parquet schema");
    int index = schema->GetFieldIndex(column);
    if (index < 0) return MissingColumn(path, column, *schema);
    int groups = (*reader)->num_row_groups();
    for (int g = 0; g < groups; ++g) {
      std::shared_ptr<arrow::ChunkedArray> chunks;
      s = (*reader)->RowGroup(g)->Column(index)->Read(&chunks);
      if (!s.ok()) return FromArrow(s, path + " row group " + std::to_string(g));
      for (const auto& chunk : chunks->chunks()) {
        STOKER_RETURN_IF_ERROR(AppendTokenColumn(*chunk, path + " column '" + column + "'", out));
      }
    }
  } catch (const std::exception& e) {
    return Corruption(path + ": Parquet: " + e.what());
  }
  return Status::OK();
}

Status ReadIpcColumn(std::shared_ptr<const ByteSource> source, const std::string& column,
                     TokenColumn* out) {
  const std::string path = source->uri();
  auto file = std::make_shared<ArrowByteFile>(std::move(source));
  auto reader = arrow::ipc::RecordBatchStreamReader::Open(file.get());
  if (!reader.ok()) return FromArrow(reader.status(), path + ": Arrow IPC stream schema");
  int index = (*reader)->schema()->GetFieldIndex(column);
  if (index < 0) return MissingColumn(path, column, *(*reader)->schema());
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    arrow::Status s = (*reader)->ReadNext(&batch);
    if (s.ok() && batch != nullptr) s = batch->ValidateFull();  // untrusted offsets, checked
    if (!s.ok()) return FromArrow(s, path + ": Arrow IPC record batch");
    if (batch == nullptr) return Status::OK();
    STOKER_RETURN_IF_ERROR(
        AppendTokenColumn(*batch->column(index), path + " column '" + column + "'", out));
  }
}

}  // namespace

namespace arrow_module {

Result<TokenColumn> ReadTokenColumn(std::shared_ptr<const ByteSource> file, RecordFormat format,
                                    const std::string& column) {
  TokenColumn out;
  out.offsets.push_back(0);
  if (format == RecordFormat::kParquet) {
    STOKER_RETURN_IF_ERROR(ReadParquetColumn(std::move(file), column, &out));
  } else {
    STOKER_RETURN_IF_ERROR(ReadIpcColumn(std::move(file), column, &out));
  }
  return out;
}

}  // namespace arrow_module
}  // namespace stoker
