// ShardSink: writes a stream of documents into consecutive Megatron shards named
// <dir>/part-<task>-<shard> (5-digit, zero-padded), so that the parts of a multi-task pack sort
// and merge in task order. A shard is closed when the next document would take its .bin past
// shard_size_bytes; a document is never split, so a document larger than the limit gets a shard
// of its own. Not thread-safe: one user at a time (the pack writer thread).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "format/manifest.h"
#include "format/megatron_writer.h"

namespace stoker {

class ShardSink {
 public:
  ShardSink(std::string dir, uint32_t task_index, TokenDType dtype, uint64_t shard_size_bytes);
  ~ShardSink();  // an unfinished shard's temporary files are removed

  // Appends one document (its tokens, EOS included).
  Status Add(std::span<const int32_t> tokens);
  // Appends consecutive documents already stored as the dtype (see
  // MegatronWriter::AddStoredDocuments): `lengths` in tokens, EOS included; `bytes` holds them
  // one after another. The documents are cut into shards exactly as by Add.
  Status AddStored(std::span<const uint8_t> bytes, std::span<const uint64_t> lengths);
  // Closes the open shard and returns every shard written, in order.
  Result<std::vector<ShardInfo>> Finish();
  // Deletes every shard finished so far (after a failed pack, so no orphans remain).
  void RemoveFinishedShards();

  // "part-00003-00012".
  static std::string ShardName(uint32_t task_index, uint64_t shard_index);

 private:
  Status CloseShard();

  std::string dir_;
  uint32_t task_index_;
  TokenDType dtype_;
  uint64_t shard_size_bytes_;
  std::unique_ptr<MegatronWriter> writer_;
  std::vector<ShardInfo> shards_;
};

}  // namespace stoker
