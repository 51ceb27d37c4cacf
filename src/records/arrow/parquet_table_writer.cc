// arrow_sources.h's OpenParquetTableWriter inside the Arrow module: integer columns (some of them
// dictionary-encoded strings) written one row group per call with parquet::arrow::FileWriter.
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

#include "records/arrow/arrow_byte_file.h"
#include "records/arrow/arrow_module.h"

namespace stoker::arrow_module {
namespace {

Status WriterError(const arrow::Status& status, const std::string& path) {
  // FromArrow calls an error it does not know corruption; a writer's are I/O.
  Status st = FromArrow(status, path);
  return st.code() == StatusCode::kCorruption ? IOError(path + ": " + status.message()) : st;
}

class ArrowParquetTableWriter final : public ParquetTableWriter {
 public:
  ArrowParquetTableWriter(std::string path, std::vector<ParquetColumnSpec> specs,
                          std::shared_ptr<arrow::Schema> schema,
                          std::vector<std::shared_ptr<arrow::Array>> dictionaries,
                          std::shared_ptr<arrow::io::FileOutputStream> out,
                          std::unique_ptr<parquet::arrow::FileWriter> writer)
      : path_(std::move(path)),
        specs_(std::move(specs)),
        schema_(std::move(schema)),
        dictionaries_(std::move(dictionaries)),
        out_(std::move(out)),
        writer_(std::move(writer)) {}

  ~ArrowParquetTableWriter() override {
    if (writer_ != nullptr) (void)Close();
  }

  Status WriteRowGroup(const std::vector<std::vector<int64_t>>& columns) override {
    if (writer_ == nullptr) return FailedPrecondition(path_ + ": the Parquet writer is closed");
    if (columns.size() != specs_.size() || columns.empty()) {
      return InvalidArgument(path_ + ": " + std::to_string(columns.size()) + " columns given, " +
                             std::to_string(specs_.size()) + " expected");
    }
    const int64_t rows = static_cast<int64_t>(columns[0].size());
    std::vector<std::shared_ptr<arrow::Array>> arrays;
    for (size_t c = 0; c < columns.size(); ++c) {
      if (static_cast<int64_t>(columns[c].size()) != rows) {
        return InvalidArgument(path_ + ": column " + specs_[c].name + " has " +
                               std::to_string(columns[c].size()) + " rows, not " +
                               std::to_string(rows));
      }
      Result<std::shared_ptr<arrow::Array>> array = MakeColumn(c, columns[c]);
      if (!array.ok()) return array.status();
      arrays.push_back(std::move(*array));
    }
    std::shared_ptr<arrow::Table> table = arrow::Table::Make(schema_, arrays, rows);
    arrow::Status st = writer_->WriteTable(*table, std::max<int64_t>(rows, 1));
    return st.ok() ? Status::OK() : WriterError(st, path_);
  }

  Status Close() override {
    if (writer_ == nullptr) return Status::OK();
    arrow::Status st = writer_->Close();
    writer_.reset();
    if (st.ok()) st = out_->Close();
    return st.ok() ? Status::OK() : WriterError(st, path_);
  }

 private:
  Result<std::shared_ptr<arrow::Array>> MakeColumn(size_t c, const std::vector<int64_t>& values) {
    const ParquetColumnSpec& spec = specs_[c];
    const int64_t rows = static_cast<int64_t>(values.size());
    std::shared_ptr<arrow::Buffer> validity;
    int64_t nulls = 0;
    if (spec.nullable) {
      for (int64_t v : values) nulls += v < 0 ? 1 : 0;
      if (nulls > 0) {
        auto bitmap = arrow::AllocateEmptyBitmap(rows);
        if (!bitmap.ok()) return WriterError(bitmap.status(), path_);
        uint8_t* bits = (*bitmap)->mutable_data();
        for (int64_t i = 0; i < rows; ++i) {
          if (values[i] >= 0) arrow::bit_util::SetBit(bits, i);
        }
        validity = std::move(*bitmap);
      }
    }
    if (spec.dictionary.empty()) {
      // In place: the caller's vector outlives the write (WriteRowGroup's contract).
      return std::static_pointer_cast<arrow::Array>(std::make_shared<arrow::Int64Array>(
          rows, arrow::Buffer::Wrap(values.data(), values.size()), validity, nulls));
    }
    auto data = arrow::AllocateBuffer(rows * static_cast<int64_t>(sizeof(int32_t)));
    if (!data.ok()) return WriterError(data.status(), path_);
    auto* out = reinterpret_cast<int32_t*>((*data)->mutable_data());
    const int64_t size = static_cast<int64_t>(spec.dictionary.size());
    for (int64_t i = 0; i < rows; ++i) {
      if (values[i] >= size) {
        return InvalidArgument(path_ + ": column " + spec.name + " value " +
                               std::to_string(values[i]) + " is past its dictionary");
      }
      out[i] = values[i] < 0 ? 0 : static_cast<int32_t>(values[i]);
    }
    auto indices = std::make_shared<arrow::Int32Array>(
        rows, std::shared_ptr<arrow::Buffer>(std::move(*data)), validity, nulls);
    return std::static_pointer_cast<arrow::Array>(std::make_shared<arrow::DictionaryArray>(
        arrow::dictionary(arrow::int32(), arrow::utf8()), indices, dictionaries_[c]));
  }

  std::string path_;
  std::vector<ParquetColumnSpec> specs_;
  std::shared_ptr<arrow::Schema> schema_;
  std::vector<std::shared_ptr<arrow::Array>> dictionaries_;  // per column; null for integers
  std::shared_ptr<arrow::io::FileOutputStream> out_;
  std::unique_ptr<parquet::arrow::FileWriter> writer_;
};

}  // namespace

Result<std::unique_ptr<ParquetTableWriter>> OpenParquetTableWriter(
    const std::string& path, const std::vector<ParquetColumnSpec>& columns) {
  if (columns.empty()) return InvalidArgument(path + ": a Parquet table needs a column");
  arrow::FieldVector fields;
  std::vector<std::shared_ptr<arrow::Array>> dictionaries;
  for (const ParquetColumnSpec& spec : columns) {
    std::shared_ptr<arrow::Array> dictionary;
    if (spec.dictionary.empty()) {
      fields.push_back(arrow::field(spec.name, arrow::int64(), spec.nullable));
    } else {
      arrow::StringBuilder builder;
      arrow::Status st = builder.AppendValues(spec.dictionary);
      if (st.ok()) st = builder.Finish(&dictionary);
      if (!st.ok()) return WriterError(st, path);
      fields.push_back(
          arrow::field(spec.name, arrow::dictionary(arrow::int32(), arrow::utf8()), spec.nullable));
    }
    dictionaries.push_back(std::move(dictionary));
  }
  std::shared_ptr<arrow::Schema> schema = arrow::schema(fields);
  auto out = arrow::io::FileOutputStream::Open(path);
  if (!out.ok()) return WriterError(out.status(), path);
  parquet::WriterProperties::Builder builder;
  builder.compression(arrow::Compression::SNAPPY)->max_row_group_length(1LL << 40);
  for (const ParquetColumnSpec& spec : columns) {
    if (spec.plain || spec.delta) builder.disable_dictionary(spec.name);
    if (spec.delta) {
      builder.encoding(spec.name, parquet::Encoding::DELTA_BINARY_PACKED)
          ->compression(spec.name, arrow::Compression::UNCOMPRESSED);
    }
    if (!spec.statistics) builder.disable_statistics(spec.name);
  }
  std::shared_ptr<parquet::WriterProperties> props = builder.build();
  std::shared_ptr<parquet::ArrowWriterProperties> arrow_props =
      parquet::ArrowWriterProperties::Builder().store_schema()->build();
  auto writer = parquet::arrow::FileWriter::Open(*schema, arrow::default_memory_pool(), *out, props,
                                                 arrow_props);
  if (!writer.ok()) return WriterError(writer.status(), path);
  return std::unique_ptr<ParquetTableWriter>(std::make_unique<ArrowParquetTableWriter>(
      path, columns, std::move(schema), std::move(dictionaries), std::move(*out),
      std::move(*writer)));
}

}  // namespace stoker::arrow_module
