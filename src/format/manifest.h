// Manifest: the JSON file (manifest.json) that describes a stoker dataset directory.
//
// It records what the Megatron `.bin`/`.idx` layout lacks: format version, tokenizer identity,
// counts and checksums per shard. A dataset is complete exactly when its manifest exists: writers
// create shards under temporary names and write the manifest last, atomically (temp + rename).
// Plain values; not thread-safe (one user at a time).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/status.h"
#include "stoker/token_source.h"

namespace stoker {

inline constexpr std::string_view kManifestFileName = "manifest.json";
inline constexpr int kManifestFormatVersion = 1;

struct ShardInfo {
  // Path prefix of the shard relative to the dataset directory (may contain "../" after a merge).
  // The files are <prefix>.bin and <prefix>.idx.
  std::string prefix;
  uint64_t documents = 0;
  uint64_t tokens = 0;
  uint64_t bin_bytes = 0;
  uint64_t idx_bytes = 0;
  std::string bin_xxh3;  // XXH3-64 of the whole .bin, 16 lowercase hex digits
  std::string idx_xxh3;  // XXH3-64 of the whole .idx
};

// The dataset's consolidated length index (format/length_index.h), when it has one.
struct LengthIndexInfo {
  std::string file;  // relative to the dataset directory
  uint64_t bytes = 0;
  uint64_t documents = 0;
  std::string xxh3;  // XXH3-64 of the file's arrays, as its header records it
};

// A chat dataset's loss mask (docs/chat.md, "On disk"): a stoker dataset of its own, in a
// subdirectory, whose document i holds the trained token spans of document i as int32 pairs
// [start, end), increasing and within the document.
struct LossMaskInfo {
  std::string dataset = "loss_mask";  // relative to the dataset directory
  uint64_t trained_tokens = 0;        // tokens inside the spans, over every document
};

inline constexpr std::string_view kLossMaskTokenizer = "loss-mask-spans";

struct Manifest {
  int version = kManifestFormatVersion;
  TokenizerInfo tokenizer;
  TokenDType dtype = TokenDType::kUint16;
  std::vector<ShardInfo> shards;
  // Counters from the pack that produced the dataset (e.g. "invalid_utf8_replaced", "skipped").
  std::map<std::string, uint64_t> counters;
  // Absent in datasets written before the length index existed (`stoker index` adds it).
  std::optional<LengthIndexInfo> length_index;
  // Chat data packed with a loss mask.
  std::optional<LossMaskInfo> loss_mask;

  uint64_t total_documents() const;
  uint64_t total_tokens() const;

  std::string ToJson() const;  // pretty-printed, stable key order
  // Parses and validates (types, version, non-negative counts). `origin` names the file in errors.
  static Result<Manifest> Parse(std::string_view json, std::string_view origin);
};

// Reads <dataset_dir>/manifest.json. kNotFound if absent.
Result<Manifest> ReadManifest(const std::string& dataset_dir);
// Writes <dataset_dir>/manifest.json atomically (temp file, fsync, rename).
Status WriteManifest(const std::string& dataset_dir, const Manifest& manifest);

}  // namespace stoker
