// LitData optimized chunks (docs/formats-reference.md §5, checked against litdata 0.2.76): the
// config that index.json gives every chunk, and the decoding of one decompressed chunk into items
// and leaves. Pure functions over bytes (the fuzz target drives them). Thread-safe (no state).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "records/record.h"
#include "stoker/status.h"

namespace stoker {

struct LitDataConfig {
  bool tokens_loader = false;            // TokensLoader (else PyTreeLoader)
  std::vector<std::string> data_format;  // the serializer of each flattened leaf
  std::vector<std::string> leaf_names;   // dict keys ("a.b" when nested), list positions "0"...
  std::string compression;               // "", "zstd", "zstd:N"
  std::string compression_level;         // "" / "chunk" (whole file), "sample", "batch"
};

// The config object of an index.json. kCorruption naming `where` when malformed; kUnimplemented
// for encrypted datasets and for item loaders other than PyTreeLoader and TokensLoader.
Result<LitDataConfig> ParseLitDataConfig(std::string_view index_json, const std::string& where);

// The item byte ranges [begin, end) of a decompressed chunk: u32 n, u32 offsets[n+1] (absolute),
// payloads. kCorruption naming `where` and the offset for a short table or an offset past the end
// or out of order.
Result<std::vector<std::pair<uint32_t, uint32_t>>> ParseLitDataChunk(std::string_view chunk,
                                                                     const std::string& where);

// True when the chunk carries its rows as an embedded Arrow IPC file (litdata's "LDARW01" row
// footer); *arrow_file is that file's bytes. kCorruption if the footer's length is impossible.
Result<bool> FindLitDataArrowRows(std::string_view chunk, std::string_view* arrow_file,
                                  const std::string& where);

// Decodes one PyTreeLoader item (u32 size per leaf, then the leaves) into one field per leaf.
Status DecodeLitDataItem(std::string_view item, const LitDataConfig& config,
                         std::vector<Field>* fields);

// One leaf by its serializer name: str -> kString; int, bool -> kInt; float -> kFloat;
// no_header_numpy:<i>, no_header_tensor:<i>, numpy, tensor -> kTokens (integer dtypes,
// flattened) or kFloat; anything else (bytes, jpeg, pil, file:, video:, pickle...) -> kBytes raw.
Status DecodeLitDataLeaf(std::string_view format, std::string_view bytes, Field* field);

}  // namespace stoker
