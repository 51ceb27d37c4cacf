// The entry point of libstoker_arrow.so (arrow_module.h): its one exported symbol.
#include "records/arrow/arrow_module.h"

namespace stoker::arrow_module {
namespace {

const Readers kReaders = {
    .parquet_row_groups = &ParquetRowGroups,
    .open_parquet_shard = &OpenParquetShard,
    .open_arrow_ipc_shard = &OpenArrowIpcShard,
    .read_token_column = &ReadTokenColumn,
    .open_parquet_table_writer = &OpenParquetTableWriter,
};

}  // namespace
}  // namespace stoker::arrow_module

extern "C" __attribute__((visibility("default"))) const stoker::arrow_module::Readers*
stoker_arrow_readers_v1() {
  return &stoker::arrow_module::kReaders;
}
