#include "format/dataset_length_index.h"

#include <algorithm>
#include <vector>

#include "common/file_util.h"
#include "format/megatron_source.h"

namespace stoker {

Result<LengthIndexInfo> BuildDatasetLengthIndex(const std::string& dir, const Manifest& manifest) {
  std::vector<uint64_t> first{0};
  for (const ShardInfo& s : manifest.shards) first.push_back(first.back() + s.documents);
  const std::string path = JoinPath(dir, kLengthIndexFileName);
  STOKER_ASSIGN_OR_RETURN(auto writer, LengthIndexWriter::Create(path, first));
  std::vector<uint64_t> buffer;
  for (size_t s = 0; s < manifest.shards.size(); ++s) {
    const std::string prefix = JoinPath(dir, manifest.shards[s].prefix);
    STOKER_ASSIGN_OR_RETURN(auto shard,
                            MegatronSource::Open(prefix, MegatronIndex::Checks::kHeader));
    if (shard->num_documents() != manifest.shards[s].documents) {
      return Corruption(prefix + ".idx: " + std::to_string(shard->num_documents()) +
                        " documents, but the manifest says " +
                        std::to_string(manifest.shards[s].documents) + " (shard " +
                        std::to_string(s) + ")");
    }
    constexpr uint64_t kChunk = 1 << 16;
    buffer.resize(kChunk);
    for (uint64_t d = 0; d < shard->num_documents(); d += kChunk) {
      const uint64_t n = std::min(kChunk, shard->num_documents() - d);
      for (uint64_t i = 0; i < n; ++i) {
        const int32_t len = shard->index().sequence_length(d + i);
        if (len < 0) {
          return CorruptionAt(prefix + ".idx", kMegatronHeaderBytes + 4 * (d + i),
                              "negative length " + std::to_string(len));
        }
        buffer[i] = static_cast<uint64_t>(len);
      }
      STOKER_RETURN_IF_ERROR(writer->Add(buffer.data(), n));
    }
  }
  STOKER_ASSIGN_OR_RETURN(LengthIndexHeader h, writer->Finish());
  // The rename made it visible under its name, but only the manifest written next makes a reader
  // use it.
  if (h.total_tokens != manifest.total_tokens()) {
    return Corruption(path + ": the shards' lengths sum to " + std::to_string(h.total_tokens) +
                      " tokens, but the manifest says " + std::to_string(manifest.total_tokens()));
  }
  return LengthIndexInfo{std::string(kLengthIndexFileName), h.file_bytes, h.num_documents,
                         Xxh3Hex(h.arrays_xxh3)};
}

Result<std::shared_ptr<const LengthIndex>> OpenDatasetLengthIndex(const std::string& dir,
                                                                  const Manifest& manifest) {
  const LengthIndexInfo& info = *manifest.length_index;
  const std::string path = JoinPath(dir, info.file);
  const std::string rebuild = " (`stoker index " + dir + "` rebuilds it)";
  Result<std::shared_ptr<const LengthIndex>> index = LengthIndex::Open(path);
  if (!index.ok()) {
    return Status(index.status().code(), index.status().message() + rebuild);
  }
  const LengthIndexHeader& h = (*index)->header();
  auto stale = [&](const std::string& what) {
    return Corruption(path + ": stale or foreign length index: " + what + rebuild);
  };
  if (h.file_bytes != info.bytes || Xxh3Hex(h.arrays_xxh3) != info.xxh3) {
    return stale("its size or checksum (" + std::to_string(h.file_bytes) + " bytes, xxh3 " +
                 Xxh3Hex(h.arrays_xxh3) + ") is not the one manifest.json records (" +
                 std::to_string(info.bytes) + " bytes, xxh3 " + info.xxh3 + ")");
  }
  if (h.num_documents != manifest.total_documents() || h.num_documents != info.documents ||
      h.num_shards != manifest.shards.size() || h.total_tokens != manifest.total_tokens()) {
    return stale(std::to_string(h.num_documents) + " documents in " + std::to_string(h.num_shards) +
                 " shards with " + std::to_string(h.total_tokens) +
                 " tokens, but the shards hold " + std::to_string(manifest.total_documents()) +
                 " documents in " + std::to_string(manifest.shards.size()) + " shards with " +
                 std::to_string(manifest.total_tokens()) + " tokens");
  }
  uint64_t first = 0;
  for (size_t s = 0; s < manifest.shards.size(); ++s) {
    if ((*index)->shard_first_document(s) != first) {
      return stale("shard " + std::to_string(s) + " starts at document " +
                   std::to_string((*index)->shard_first_document(s)) + ", the manifest says " +
                   std::to_string(first));
    }
    first += manifest.shards[s].documents;
  }
  // A version-2 index checks each chunk of lengths the first time it is read (its verifier), so
  // opening stays O(shards). A version-1 file has no chunk checksums: it is hashed whole here, one
  // pass at memory bandwidth, since a damaged length would otherwise give a silently different
  // plan (`stoker index DIR` rewrites it as version 2).
  if (h.version < 2) {
    Status checksum = (*index)->VerifyChecksum();
    if (!checksum.ok()) return Status(checksum.code(), checksum.message() + rebuild);
  }
  return index;
}

}  // namespace stoker
