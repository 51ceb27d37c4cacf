// Record sources over Apache Arrow C++ (docs/formats-reference.md §7 and §8): Parquet files, one
// shard per row group, and Arrow IPC files (the stream format that Hugging Face `save_to_disk`
// writes, and the ARROW1 file format). Arrow comes from the pyarrow wheel and is optional at build
// time (cmake/arrow.cmake): without it every function here fails with kUnimplemented. Bytes are
// read through ByteSource. Free functions are thread-safe; a returned RecordSource is not (one
// user).
//
// Columns become fields: utf8 / large_utf8 / utf8_view -> kString; binary, large_binary,
// fixed_size_binary -> kBytes; bool and every integer type -> kInt; float16/32/64 -> kFloat;
// list / large_list / fixed_size_list of integers -> kTokens, of floats -> kFloat. A null value
// leaves its field out of the record; columns of other types (structs, maps, dictionaries...) are
// left out. A record's key is its row number in the file.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "records/record_source.h"
#include "storage/byte_source.h"

namespace stoker {

// True when this build reads Parquet and Arrow (STOKER_ARROW found pyarrow).
bool ArrowReadersAvailable();

// One shard per row group of the Parquet file `path`, in file order (part = the row group; none
// for a file without rows). A footer that does not parse gives one whole-file shard (part -1)
// whose open is the kCorruption naming the file and the footer's byte offset.
// `store`: where the file lives (record_store.h); a remote footer is read with ranged GETs (the
// file's tail), never the whole file. `size_bytes`: the file's size when a listing gave it (0:
// asked for).
Result<std::vector<RecordShard>> ListParquetShards(const std::string& path,
                                                   const RecordStore& store = {},
                                                   uint64_t size_bytes = 0);

// The rows of row group shard.part (the whole file when part is -1) of a Parquet file.
Result<std::unique_ptr<RecordSource>> OpenParquetShard(const RecordShard& shard,
                                                       std::shared_ptr<const ByteSource> source);

// The rows of an Arrow IPC stream (or ARROW1 file, told apart by its first bytes).
Result<std::unique_ptr<RecordSource>> OpenArrowIpcShard(const RecordShard& shard,
                                                        std::shared_ptr<const ByteSource> source);

// The integer-list column `column` of a Parquet file or an Arrow IPC file, as one flat token array
// plus the length of every row (tokens of row i are [offsets[i], offsets[i+1])). Null rows are
// empty. kInvalidArgument naming the file and the column if it is missing or not a list of
// integers; kOutOfRange if a value does not fit in int32.
struct TokenColumn {
  std::vector<int32_t> tokens;
  std::vector<uint64_t> offsets;  // size rows + 1, offsets[0] == 0
};
Result<TokenColumn> ReadArrowTokenColumn(const std::string& path, RecordFormat format,
                                         const std::string& column);

// A Parquet file written by row groups of integer columns (`stoker trace`). A column with a
// `dictionary` is a string column (Arrow dictionary<int32, utf8>) whose values are indexes into
// it; a `nullable` column stores a negative value as null. Columns are int64 otherwise.
struct ParquetColumnSpec {
  std::string name;
  std::vector<std::string> dictionary;
  bool nullable = false;
  bool plain = false;  // many distinct values: Parquet's dictionary encoding left off
  // An integer column stored DELTA_BINARY_PACKED and uncompressed (no dictionary, no Snappy):
  // for `stoker trace`'s columns, steady or random, cheaper to encode and smaller than either.
  bool delta = false;
  bool statistics = true;  // min/max per row group (what a reader's filter prunes by)
};
// Not thread-safe: one user.
class ParquetTableWriter {
 public:
  virtual ~ParquetTableWriter() = default;
  // One row group: columns[c] holds the rows of column c (all of the same size, > 0). The
  // vectors are read in place (not copied) during the call.
  virtual Status WriteRowGroup(const std::vector<std::vector<int64_t>>& columns) = 0;
  // Writes the footer and closes the file; the file is incomplete until it returns OK.
  virtual Status Close() = 0;
};
// Creates (truncates) the local file `path`. kUnimplemented in a build without Arrow; kIOError
// naming the file when it cannot be created.
Result<std::unique_ptr<ParquetTableWriter>> OpenParquetTableWriter(
    const std::string& path, const std::vector<ParquetColumnSpec>& columns);

}  // namespace stoker
