// Parquet through Arrow C++'s parquet::arrow reader: the footer gives the row groups (the shards),
// and a shard streams its row group as record batches of kBatchRows rows.
#include <arrow/memory_pool.h>
#include <arrow/record_batch.h>
#include <parquet/arrow/reader.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include "records/arrow/arrow_byte_file.h"
#include "records/arrow/arrow_columns.h"
#include "records/arrow/arrow_module.h"

namespace stoker {
namespace {

constexpr int64_t kBatchRows = 1024;

std::string FooterWhere(const ByteSource& source) {
  uint64_t size = source.size_bytes();
  return source.uri() + ": Parquet footer (byte offset " +
         std::to_string(size >= 8 ? size - 8 : 0) + ")";
}

// The parsed footer, or kCorruption naming the file and the footer's offset. Parquet's C++ reader
// throws ParquetException for a bad footer; it stops here.
Result<std::unique_ptr<parquet::ParquetFileReader>> OpenFooter(
    std::shared_ptr<const ByteSource> source) {
  std::string where = FooterWhere(*source);
  try {
    auto file = std::make_shared<ArrowByteFile>(std::move(source));
    return parquet::ParquetFileReader::Open(file);
  } catch (const std::exception& e) {
    return Corruption(where + ": " + e.what());
  }
}

uint64_t RowGroupOffset(const parquet::RowGroupMetaData& rg) {
  if (rg.num_columns() == 0) return 0;
  return static_cast<uint64_t>(rg.ColumnChunk(0)->file_offset());
}

class ParquetSource final : public RecordSource {
 public:
  static Result<std::unique_ptr<RecordSource>> Open(const RecordShard& shard,
                                                    std::shared_ptr<const ByteSource> source) {
    std::string uri = source->uri();
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<parquet::ParquetFileReader> raw, OpenFooter(source));
    std::shared_ptr<parquet::FileMetaData> meta = raw->metadata();
    std::vector<int> groups;
    uint64_t first_row = 0, offset = 0;
    if (shard.part >= 0) {
      if (shard.part >= meta->num_row_groups()) {
        return InvalidArgument(uri + ": no row group " + std::to_string(shard.part) +
                               " (the file has " + std::to_string(meta->num_row_groups()) + ")");
      }
      groups.push_back(static_cast<int>(shard.part));
      for (int g = 0; g < shard.part; ++g) first_row += meta->RowGroup(g)->num_rows();
      offset = RowGroupOffset(*meta->RowGroup(static_cast<int>(shard.part)));
    } else {
      for (int g = 0; g < meta->num_row_groups(); ++g) groups.push_back(g);
    }
    auto self = std::unique_ptr<ParquetSource>(new ParquetSource());
    parquet::ArrowReaderProperties props;
    props.set_batch_size(kBatchRows);
    try {
      arrow::Result<std::unique_ptr<parquet::arrow::FileReader>> reader =
          parquet::arrow::FileReader::Make(arrow::default_memory_pool(), std::move(raw), props);
      if (!reader.ok()) return FromArrow(reader.status(), uri + ": Parquet schema");
      self->reader_ = std::move(*reader);
      auto batches = self->reader_->GetRecordBatchReader(groups);
      if (!batches.ok()) return FromArrow(batches.status(), uri + ": Parquet row groups");
      self->batches_ = std::move(*batches);
    } catch (const std::exception& e) {
      return Corruption(uri + ": Parquet schema: " + e.what());
    }
    std::string where = uri + (shard.part >= 0 ? " row group " + std::to_string(shard.part) : "");
    ParquetSource* p = self.get();
    self->rows_.emplace(uri, first_row, offset,
                        [p, where]() -> Result<std::shared_ptr<arrow::RecordBatch>> {
                          std::shared_ptr<arrow::RecordBatch> batch;
                          try {
                            arrow::Status s = p->batches_->ReadNext(&batch);
                            if (!s.ok()) return FromArrow(s, where);
                          } catch (const std::exception& e) {
                            return Corruption(where + ": " + e.what());
                          }
                          return batch;
                        });
    return std::unique_ptr<RecordSource>(std::move(self));
  }

  Result<std::optional<Record>> Next() override { return rows_->Next(); }

 private:
  ParquetSource() = default;

  std::unique_ptr<parquet::arrow::FileReader> reader_;  // outlives batches_
  std::unique_ptr<arrow::RecordBatchReader> batches_;
  std::optional<ArrowRowReader> rows_;
};

}  // namespace

namespace arrow_module {

Result<std::vector<ParquetRowGroup>> ParquetRowGroups(std::shared_ptr<const ByteSource> file) {
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<parquet::ParquetFileReader> raw,
                          OpenFooter(std::move(file)));
  std::shared_ptr<parquet::FileMetaData> meta = raw->metadata();
  std::vector<ParquetRowGroup> groups;
  for (int g = 0; g < meta->num_row_groups(); ++g) {
    std::unique_ptr<parquet::RowGroupMetaData> rg = meta->RowGroup(g);
    if (rg->num_rows() == 0) continue;
    groups.push_back({g, static_cast<uint64_t>(std::max<int64_t>(rg->total_compressed_size(), 0))});
  }
  return groups;
}

Result<std::unique_ptr<RecordSource>> OpenParquetShard(const RecordShard& shard,
                                                       std::shared_ptr<const ByteSource> source) {
  return ParquetSource::Open(shard, std::move(source));
}

}  // namespace arrow_module
}  // namespace stoker
