#include "format/stoker_dataset.h"

#include <algorithm>
#include <cstdio>

#include "common/file_util.h"
#include "common/uri.h"
#include "format/dataset_length_index.h"
#include "format/index_lengths.h"
#include "format/token_convert.h"

namespace stoker {

namespace {
// A dataset without a length index and at least this many documents gets a note.
constexpr uint64_t kLargeWithoutIndex = uint64_t{1} << 20;
}  // namespace

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

Result<ShardPool::Shard> StokerDataset::OpenShard(uint64_t s) const {
  const std::string manifest_path = JoinPath(dir_, kManifestFileName);
  Result<std::unique_ptr<MegatronSource>> shard =
      MegatronSource::Open(shard_prefix(s), MegatronIndex::Checks::kHeader);
  if (!shard.ok()) {
    std::string what =
        shard.status().code() == StatusCode::kNotFound ? "missing shard" : "bad shard";
    return Status(shard.status().code(), shard.status().message() + " (" + what + " " +
                                             std::to_string(s) + " of " + manifest_path + ")");
  }
  STOKER_RETURN_IF_ERROR(CheckShardAgainstManifest(manifest_, s, **shard, manifest_path));
  return ShardPool::Shard(std::move(*shard));
}

ShardRef StokerDataset::shard_ref(uint64_t s) const {
  return ShardRef{s, shard_prefix(s), &manifest_.shards[s], manifest_.dtype,
                  JoinUri(dir_, kManifestFileName)};
}

Result<DatasetLengths> StokerDataset::Lengths() const {
  if (length_index_ != nullptr) {
    DatasetLengths mapped = LengthsFromIndex(length_index_, dir_);
    // The dataset's boundaries, which Open checked against the index.
    mapped.shard_first_document = first_document_;
    return mapped;
  }
  // A dataset written before length indexes existed: copied, one pass over the shards.
  if (num_documents() >= kLargeWithoutIndex) {
    std::fprintf(stderr,
                 "stoker: note: %s has no length index; the plan copies its %llu lengths into "
                 "memory (8 bytes each, in every process). `stoker index %s` writes one.\n",
                 dir_.c_str(), static_cast<unsigned long long>(num_documents()), dir_.c_str());
  }
  return TokenSource::Lengths();
}

TokenSource::ShardBytes StokerDataset::shard_bytes(uint64_t shard) const {
  if (opener_ == nullptr) return {};
  const ShardInfo& info = manifest_.shards[shard];
  return {info.bin_bytes, info.idx_bytes};
}

void StokerDataset::ScheduleShards(const std::vector<uint64_t>& shards) const {
  if (opener_ == nullptr) return;
  std::vector<ShardRef> refs;
  refs.reserve(shards.size());
  for (uint64_t s : shards) refs.push_back(shard_ref(s));
  opener_->Schedule(refs);
}

Status StokerDataset::StageShard(uint64_t shard) const {
  if (opener_ == nullptr) return Status::OK();
  return opener_->Stage(shard_ref(shard));
}

Result<std::unique_ptr<StokerDataset>> StokerDataset::Open(const std::string& dir) {
  auto ds = std::unique_ptr<StokerDataset>(new StokerDataset());
  ds->dir_ = dir;
  STOKER_ASSIGN_OR_RETURN(ds->manifest_, ReadManifest(dir));
  const uint64_t num_shards = ds->manifest_.shards.size();
  STOKER_ASSIGN_OR_RETURN(ds->reservation_, MappedShardReservation::Reserve(num_shards));
  const uint64_t keep = ds->reservation_.granted();
  if (keep < num_shards) {
    // Said once per open: on-demand mapping works, but global shuffle pays for it.
    std::fprintf(stderr,
                 "stoker: note: %s has %llu shards, more than the %llu this process keeps mapped "
                 "(vm.max_map_count; STOKER_MAX_MAPPED_SHARDS); shards are mapped on demand, which "
                 "can be many times slower under global shuffle. Raise vm.max_map_count or pack "
                 "larger shards to keep every shard mapped.\n",
                 dir.c_str(), static_cast<unsigned long long>(num_shards),
                 static_cast<unsigned long long>(keep));
    ds->pool_ = std::make_unique<ShardPool>(
        num_shards, keep, [self = ds.get()](uint64_t s) { return self->OpenShard(s); });
  } else {
    ds->resident_.reserve(num_shards);
  }
  ds->first_document_.reserve(num_shards + 1);
  // Every shard is opened and checked once here, so that a missing or bad shard fails Open; the
  // ones that fit stay mapped.
  for (uint64_t s = 0; s < num_shards; ++s) {
    STOKER_ASSIGN_OR_RETURN(ShardPool::Shard shard, ds->OpenShard(s));
    ds->first_document_.push_back(ds->first_document_.back() + shard->num_documents());
    if (ds->pool_ == nullptr) {
      ds->resident_.push_back(std::move(shard));
    } else if (s < keep) {
      ds->pool_->Offer(s, std::move(shard));
    }
  }
  ds->num_tokens_ = ds->manifest_.total_tokens();
  if (ds->manifest_.length_index) {
    STOKER_ASSIGN_OR_RETURN(ds->length_index_, OpenDatasetLengthIndex(dir, ds->manifest_));
  }
  return ds;
}

std::string StokerDataset::shard_prefix(uint64_t s) const {
  if (remote()) return JoinUri(dir_, manifest_.shards[s].prefix);
  return JoinPath(dir_, manifest_.shards[s].prefix);
}

ShardPool::Counters StokerDataset::pool_counters() const {
  return pool_ == nullptr ? ShardPool::Counters{} : pool_->counters();
}

uint64_t StokerDataset::FindShard(uint64_t doc) const {
  // The last shard whose first document is <= doc; empty shards share their first document with
  // the next one, and upper_bound skips past them.
  auto it = std::upper_bound(first_document_.begin(), first_document_.end(), doc);
  return static_cast<uint64_t>(it - first_document_.begin()) - 1;
}

Status StokerDataset::Locate(uint64_t doc, Location* at) const {
  at->index = FindShard(doc);
  at->doc = doc - first_document_[at->index];
  // The common case indexes the resident shards: no lock, no reference count on the hot path.
  if (pool_ == nullptr) {
    at->shard = resident_[at->index].get();
    return Status::OK();
  }
  if (const TokenSource* kept = pool_->Kept(at->index)) {
    at->shard = kept;
    return Status::OK();
  }
  STOKER_ASSIGN_OR_RETURN(at->hold, pool_->Acquire(at->index));
  at->shard = at->hold.get();
  return Status::OK();
}

uint64_t StokerDataset::document_length(uint64_t doc) const {
  // The length index answers without touching a shard (for a remote dataset: without a request).
  if (length_index_ != nullptr) return doc < num_documents() ? length_index_->lengths()[doc] : 0;
  Location at;
  // A shard that was readable at Open but no longer is: its reads report the error.
  if (doc >= num_documents() || !Locate(doc, &at).ok()) return 0;
  return at.shard->document_length(at.doc);
}

void StokerDataset::DocumentLengths(uint64_t first, uint64_t count, uint64_t* out) const {
  const ChunkVerifier* chunks = length_index_ ? length_index_->chunk_verifier() : nullptr;
  if (chunks != nullptr && first < num_documents()) {
    const uint64_t last = std::min(first + count, num_documents()) - 1;
    for (uint64_t c = first >> chunks->chunk_shift(); c <= last >> chunks->chunk_shift(); ++c) {
      chunks->Touch(c << chunks->chunk_shift());
    }
  }
  // A damaged length index is not used: the shards' own .idx files answer instead.
  if (length_index_ != nullptr && (chunks == nullptr || chunks->status().ok())) {
    const uint32_t* len = length_index_->lengths();
    for (uint64_t d = first; d < first + count; ++d, ++out) *out = d < num_documents() ? len[d] : 0;
    return;
  }
  // One shard at a time: on demand, each shard is mapped once for the whole run.
  const uint64_t end = std::min(first + count, num_documents());
  uint64_t doc = first;
  while (doc < end) {
    Location at;
    const bool mapped = Locate(doc, &at).ok();
    const uint64_t shard_end = std::min(end, first_document_[at.index + 1]);
    for (; doc < shard_end; ++doc, ++at.doc, ++out) {
      *out = mapped ? at.shard->document_length(at.doc) : 0;
    }
  }
  for (; doc < first + count; ++doc, ++out) *out = 0;
}

template <typename T>
Status StokerDataset::ReadImpl(uint64_t doc, uint64_t offset, uint64_t count, T* out) const {
  if (doc >= num_documents()) {
    return CheckReadRange(doc, num_documents(), 0, offset, count).WithContext(dir_);
  }
  Location at;
  STOKER_RETURN_IF_ERROR(Locate(doc, &at));
  return at.shard->Read(at.doc, offset, count, out);
}

std::optional<uint64_t> StokerDataset::TokensBetween(uint64_t doc, uint64_t end, uint64_t next_doc,
                                                     uint64_t next_offset) const {
  if (next_doc >= num_documents() || doc >= next_doc) return std::nullopt;
  const uint64_t s = FindShard(doc);
  if (FindShard(next_doc) != s) return std::nullopt;
  const TokenSource* shard = pool_ == nullptr ? resident_[s].get() : pool_->Kept(s);
  if (shard == nullptr) return std::nullopt;  // not open, or may be unmapped: no I/O here
  return shard->TokensBetween(doc - first_document_[s], end, next_doc - first_document_[s],
                              next_offset);
}

Status StokerDataset::ReadSpan(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const {
  if (doc >= num_documents()) return Read(doc, offset, count, out);  // its error
  Location at;
  STOKER_RETURN_IF_ERROR(Locate(doc, &at));
  return at.shard->ReadSpan(at.doc, offset, count, out);
}

// On demand, a prefetch maps the shard ahead of its read, which is the point of it.
void StokerDataset::PrefetchIndex(uint64_t doc) const {
  Location at;
  if (doc < num_documents() && Locate(doc, &at).ok()) at.shard->PrefetchIndex(at.doc);
}

void StokerDataset::PrefetchTokens(uint64_t doc, uint64_t offset) const {
  Location at;
  if (doc < num_documents() && Locate(doc, &at).ok()) at.shard->PrefetchTokens(at.doc, offset);
}

Status StokerDataset::Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const {
  return ReadImpl(doc, offset, count, out);
}

Status StokerDataset::Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const {
  return ReadImpl(doc, offset, count, out);
}

}  // namespace stoker
