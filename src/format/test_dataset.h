// A small stoker dataset written to a directory (created if missing) for tests (header-only, test
// code only): `shards` shards of `docs_per_shard` documents, document d of `length(d)` tokens, all
// equal to d % 200, with no length index. Free function; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "format/manifest.h"
#include "format/megatron_writer.h"

namespace stoker::testing {

inline Result<Manifest> WriteTestDataset(const std::string& dir, int shards, int docs_per_shard,
                                         const std::function<int(int)>& length) {
  STOKER_RETURN_IF_ERROR(MakeDirectories(dir));
  Manifest m;
  m.tokenizer = {"bytes", "bytes", 256, 0, ""};
  m.dtype = TokenDType::kUint16;
  for (int s = 0, doc = 0; s < shards; ++s) {
    STOKER_ASSIGN_OR_RETURN(
        std::unique_ptr<MegatronWriter> writer,
        MegatronWriter::Create(JoinPath(dir, "s" + std::to_string(s)), m.dtype));
    for (int i = 0; i < docs_per_shard; ++i, ++doc) {
      STOKER_RETURN_IF_ERROR(writer->AddDocument(std::vector<int32_t>(length(doc), doc % 200)));
    }
    STOKER_ASSIGN_OR_RETURN(ShardInfo info, writer->Finish());
    m.shards.push_back(std::move(info));
  }
  STOKER_RETURN_IF_ERROR(WriteManifest(dir, m));
  return m;
}

}  // namespace stoker::testing
