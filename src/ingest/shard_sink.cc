#include "ingest/shard_sink.h"

#include <unistd.h>

#include <cstdio>

#include "common/file_util.h"

namespace stoker {

ShardSink::ShardSink(std::string dir, uint32_t task_index, TokenDType dtype,
                     uint64_t shard_size_bytes)
    : dir_(std::move(dir)),
      task_index_(task_index),
      dtype_(dtype),
      shard_size_bytes_(shard_size_bytes) {}

ShardSink::~ShardSink() = default;

std::string ShardSink::ShardName(uint32_t task_index, uint64_t shard_index) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "part-%05u-%05llu", task_index,
                static_cast<unsigned long long>(shard_index));
  return buf;
}

Status ShardSink::Add(std::span<const int32_t> tokens) {
  uint64_t doc_bytes = tokens.size() * TokenDTypeSize(dtype_);
  if (writer_ && writer_->documents() > 0 && writer_->bin_bytes() + doc_bytes > shard_size_bytes_) {
    STOKER_RETURN_IF_ERROR(CloseShard());
  }
  if (!writer_) {
    std::string prefix = JoinPath(dir_, ShardName(task_index_, shards_.size()));
    STOKER_ASSIGN_OR_RETURN(writer_, MegatronWriter::Create(prefix, dtype_));
  }
  return writer_->AddDocument(tokens);
}

Status ShardSink::AddStored(std::span<const uint8_t> bytes, std::span<const uint64_t> lengths) {
  const uint64_t item = TokenDTypeSize(dtype_);
  uint64_t total = 0;
  for (uint64_t len : lengths) total += len;
  if (total * item != bytes.size()) {
    return InvalidArgument("ShardSink: document lengths sum to " + std::to_string(total) +
                           " tokens but " + std::to_string(bytes.size()) + " bytes were given");
  }
  size_t first = 0;        // the run of documents [first, d) goes to the open shard
  uint64_t run_bytes = 0;  // their bytes
  uint64_t offset = 0;     // where the run starts in `bytes`
  auto flush = [&](size_t d) -> Status {
    if (d == first) return Status::OK();
    STOKER_RETURN_IF_ERROR(writer_->AddStoredDocuments(bytes.subspan(offset, run_bytes),
                                                       lengths.subspan(first, d - first)));
    offset += run_bytes;
    run_bytes = 0;
    first = d;
    return Status::OK();
  };
  for (size_t d = 0; d < lengths.size(); ++d) {
    const uint64_t doc_bytes = lengths[d] * item;
    // As in Add: a shard that holds a document is closed before one that would not fit.
    const bool has_documents = writer_ && (writer_->documents() > 0 || d > first);
    if (has_documents && writer_->bin_bytes() + run_bytes + doc_bytes > shard_size_bytes_) {
      STOKER_RETURN_IF_ERROR(flush(d));
      STOKER_RETURN_IF_ERROR(CloseShard());
    }
    if (!writer_) {
      std::string prefix = JoinPath(dir_, ShardName(task_index_, shards_.size()));
      STOKER_ASSIGN_OR_RETURN(writer_, MegatronWriter::Create(prefix, dtype_));
    }
    run_bytes += doc_bytes;
  }
  return flush(lengths.size());
}

Status ShardSink::CloseShard() {
  STOKER_ASSIGN_OR_RETURN(ShardInfo info, writer_->Finish());
  writer_.reset();
  shards_.push_back(std::move(info));
  return Status::OK();
}

Result<std::vector<ShardInfo>> ShardSink::Finish() {
  if (writer_) STOKER_RETURN_IF_ERROR(CloseShard());
  return shards_;
}

void ShardSink::RemoveFinishedShards() {
  for (const ShardInfo& s : shards_) {
    std::string prefix = JoinPath(dir_, s.prefix);
    ::unlink((prefix + ".bin").c_str());
    ::unlink((prefix + ".idx").c_str());
  }
  shards_.clear();
}

}  // namespace stoker
