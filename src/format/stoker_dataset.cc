#include "format/stoker_dataset.h"

#include <algorithm>

#include "common/file_util.h"
#include "format/token_convert.h"

namespace stoker {

Status CheckShardAgainstManifest(const Manifest& manifest, uint64_t s, const MegatronSource& shard,
                                 const std::string& manifest_path) {
  const ShardInfo& info = manifest.shards[s];
  auto mismatch = [&](const std::string& file, const std::string& what, uint64_t in_manifest,
                      uint64_t actual) {
    return Corruption(file + ": " + what + " is " + std::to_string(actual) + " but " +
                      manifest_path + " says " + std::to_string(in_manifest) + " (shard " +
                      std::to_string(s) + ")");
  };
  const std::string idx = shard.idx_file().path(), bin = shard.bin_file().path();
  if (shard.dtype() != manifest.dtype) {
    return Corruption(idx + ": token dtype is " + std::string(TokenDTypeName(shard.dtype())) +
                      " but " + manifest_path + " says " +
                      std::string(TokenDTypeName(manifest.dtype)) + " (shard " + std::to_string(s) +
                      ")");
  }
  if (shard.num_documents() != info.documents) {
    return mismatch(idx, "the document count", info.documents, shard.num_documents());
  }
  if (shard.idx_file().size() != info.idx_bytes) {
    return mismatch(idx, "the size in bytes", info.idx_bytes, shard.idx_file().size());
  }
  if (shard.bin_file().size() != info.bin_bytes) {
    return mismatch(bin, "the size in bytes", info.bin_bytes, shard.bin_file().size());
  }
  return Status::OK();
}

Result<std::unique_ptr<StokerDataset>> StokerDataset::Open(const std::string& dir) {
  auto ds = std::unique_ptr<StokerDataset>(new StokerDataset());
  ds->dir_ = dir;
  STOKER_ASSIGN_OR_RETURN(ds->manifest_, ReadManifest(dir));
  const std::string manifest_path = JoinPath(dir, kManifestFileName);
  const Manifest& m = ds->manifest_;
  ds->shards_.reserve(m.shards.size());
  ds->first_document_.reserve(m.shards.size() + 1);
  for (uint64_t s = 0; s < m.shards.size(); ++s) {
    std::string prefix = ds->shard_prefix(s);
    Result<std::unique_ptr<MegatronSource>> shard =
        MegatronSource::Open(prefix, MegatronIndex::Checks::kHeader);
    if (!shard.ok()) {
      std::string what =
          shard.status().code() == StatusCode::kNotFound ? "missing shard" : "bad shard";
      return Status(shard.status().code(), shard.status().message() + " (" + what + " " +
                                               std::to_string(s) + " of " + manifest_path + ")");
    }
    STOKER_RETURN_IF_ERROR(CheckShardAgainstManifest(m, s, **shard, manifest_path));
    ds->first_document_.push_back(ds->first_document_.back() + (*shard)->num_documents());
    ds->shards_.push_back(std::move(*shard));
  }
  ds->num_tokens_ = m.total_tokens();
  return ds;
}

std::string StokerDataset::shard_prefix(uint64_t s) const {
  return JoinPath(dir_, manifest_.shards[s].prefix);
}

uint64_t StokerDataset::ShardOf(uint64_t doc) const {
  // The last shard whose first document is <= doc; empty shards share their first document with
  // the next one, and upper_bound skips past them.
  auto it = std::upper_bound(first_document_.begin(), first_document_.end(), doc);
  return static_cast<uint64_t>(it - first_document_.begin()) - 1;
}

uint64_t StokerDataset::document_length(uint64_t doc) const {
  if (doc >= num_documents()) return 0;
  uint64_t s = ShardOf(doc);
  return shards_[s]->document_length(doc - first_document_[s]);
}

template <typename T>
Status StokerDataset::ReadImpl(uint64_t doc, uint64_t offset, uint64_t count, T* out) const {
  if (doc >= num_documents()) {
    return CheckReadRange(doc, num_documents(), 0, offset, count).WithContext(dir_);
  }
  uint64_t s = ShardOf(doc);
  return shards_[s]->Read(doc - first_document_[s], offset, count, out);
}

void StokerDataset::PrefetchIndex(uint64_t doc) const {
  if (doc >= num_documents()) return;
  uint64_t s = ShardOf(doc);
  shards_[s]->PrefetchIndex(doc - first_document_[s]);
}

void StokerDataset::PrefetchTokens(uint64_t doc, uint64_t offset) const {
  if (doc >= num_documents()) return;
  uint64_t s = ShardOf(doc);
  shards_[s]->PrefetchTokens(doc - first_document_[s], offset);
}

Status StokerDataset::Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const {
  return ReadImpl(doc, offset, count, out);
}

Status StokerDataset::Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const {
  return ReadImpl(doc, offset, count, out);
}

}  // namespace stoker
