// The seam between stoker and its Arrow module, libstoker_arrow.so (cmake/arrow.cmake): the
// Parquet and Arrow IPC readers over the pyarrow wheel's libarrow and libparquet, which carry
// their own simdjson (and more) beside the Debian libraries stoker links. The module is loaded
// with dlopen on the first Parquet/Arrow read (records/arrow_sources.cc), so a process that reads
// none never maps Arrow, and with RTLD_LOCAL | RTLD_DEEPBIND, so that no symbol of one copy binds
// to the other in either direction. The module holds no stoker code but this folder's readers
// and a private copy of Status; everything else (stores, files) stays on the host side, which
// hands it ByteSources. Both sides are built from one tree: the table is checked by size.
// The functions are thread-safe; a returned RecordSource is not (one user).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "records/arrow_sources.h"

namespace stoker::arrow_module {

// One row group of a Parquet file with rows: the shard's part and its compressed size.
struct ParquetRowGroup {
  int64_t part = 0;
  uint64_t size_bytes = 0;
};

struct Readers {
  uint64_t table_bytes = sizeof(Readers);  // a module from another build has another layout
  uint64_t shard_bytes = sizeof(RecordShard);
  // The row groups with rows of the Parquet file `file`, in file order; kCorruption naming the
  // file and the footer's offset for a footer that does not parse.
  Result<std::vector<ParquetRowGroup>> (*parquet_row_groups)(
      std::shared_ptr<const ByteSource> file);
  // arrow_sources.h's OpenParquetShard and OpenArrowIpcShard.
  Result<std::unique_ptr<RecordSource>> (*open_parquet_shard)(const RecordShard& shard,
                                                              std::shared_ptr<const ByteSource>);
  Result<std::unique_ptr<RecordSource>> (*open_arrow_ipc_shard)(const RecordShard& shard,
                                                                std::shared_ptr<const ByteSource>);
  // arrow_sources.h's ReadArrowTokenColumn over the file's bytes.
  Result<TokenColumn> (*read_token_column)(std::shared_ptr<const ByteSource> file,
                                           RecordFormat format, const std::string& column);
  // arrow_sources.h's OpenParquetTableWriter (a local file).
  Result<std::unique_ptr<ParquetTableWriter>> (*open_parquet_table_writer)(
      const std::string& path, const std::vector<ParquetColumnSpec>& columns);
};

// The module's side (arrow/*.cc, inside libstoker_arrow.so only): the functions of the table.
Result<std::vector<ParquetRowGroup>> ParquetRowGroups(std::shared_ptr<const ByteSource> file);
Result<std::unique_ptr<RecordSource>> OpenParquetShard(const RecordShard& shard,
                                                       std::shared_ptr<const ByteSource> source);
Result<std::unique_ptr<RecordSource>> OpenArrowIpcShard(const RecordShard& shard,
                                                        std::shared_ptr<const ByteSource> source);
Result<TokenColumn> ReadTokenColumn(std::shared_ptr<const ByteSource> file, RecordFormat format,
                                    const std::string& column);
Result<std::unique_ptr<ParquetTableWriter>> OpenParquetTableWriter(
    const std::string& path, const std::vector<ParquetColumnSpec>& columns);

// The module's one exported symbol: extern "C" const Readers* stoker_arrow_readers_v1().
inline constexpr char kEntryPoint[] = "stoker_arrow_readers_v1";
inline constexpr char kModuleFileName[] = "libstoker_arrow.so";

}  // namespace stoker::arrow_module
