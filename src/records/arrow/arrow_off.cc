// The Arrow readers' stand-ins in a build without Arrow (STOKER_ARROW=OFF, or pyarrow not found
// when stoker was configured): every call says so, naming the file.
#include "records/arrow_sources.h"

namespace stoker {
namespace {

Status NoArrow(const std::string& path) {
  return Unimplemented(path +
                       ": this stoker was built without Parquet/Arrow support (configure with "
                       "pyarrow installed in .venv, or -DSTOKER_ARROW=ON)");
}

}  // namespace

bool ArrowReadersAvailable() { return false; }

Result<std::vector<RecordShard>> ListParquetShards(const std::string& path, const RecordStore&,
                                                   uint64_t) {
  return NoArrow(path);
}

Result<std::unique_ptr<RecordSource>> OpenParquetShard(const RecordShard& shard,
                                                       std::shared_ptr<const ByteSource>) {
  return NoArrow(shard.path);
}

Result<std::unique_ptr<RecordSource>> OpenArrowIpcShard(const RecordShard& shard,
                                                        std::shared_ptr<const ByteSource>) {
  return NoArrow(shard.path);
}

Result<TokenColumn> ReadArrowTokenColumn(const std::string& path, RecordFormat,
                                         const std::string&) {
  return NoArrow(path);
}

}  // namespace stoker
