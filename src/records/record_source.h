// RecordSource: records in order, each with a key and named fields, read from shards in one of
// the ecosystem's formats (WebDataset tar, TFRecord, MosaicML MDS, LitData, Parquet, Hugging
// Face Arrow). This is the interface that
// `stoker pack` reads today and that the streaming path will deal to ranks: a dataset expands to
// an ordered list of shards (RecordShard), and each shard opens as its own RecordSource.
// Shards are read through ByteSource, so remote backends plug in below without changes here.
// A RecordSource is not thread-safe: one user at a time; distinct sources are independent.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "records/record.h"
#include "records/record_store.h"
#include "stoker/status.h"

namespace stoker {

enum class RecordFormat { kAuto, kWebDataset, kTfRecord, kMds, kLitData, kParquet, kArrow };

// "auto", "webdataset", "tfrecord", "mds", "litdata", "parquet", "arrow" (Arrow IPC files and
// Hugging Face save_to_disk directories).
std::string_view RecordFormatName(RecordFormat format);
// Accepts those names, "wds" and "hf"; kInvalidArgument otherwise.
Result<RecordFormat> ParseRecordFormat(std::string_view name);

// One shard of a record dataset.
struct RecordShard {
  std::string path;
  RecordFormat format = RecordFormat::kAuto;
  uint64_t size_bytes = 0;  // on disk (Parquet: the row group's compressed bytes)
  // MDS: the digests that index.json lists for this file (algorithm -> hex), checked on open.
  std::vector<std::pair<std::string, std::string>> hashes;
  // Parquet: the row group this shard is (row groups give the shards); -1 for the whole file.
  int64_t part = -1;
  // Where the shard lives: local files by default, or the remote backend its listing used.
  RecordStore store;
  // The whole object's size, for opening a remote shard without a HEAD (0: unknown). Equal to
  // size_bytes except for a Parquet row group.
  uint64_t object_bytes = 0;
  // LitData: the dataset's index.json, read once when the shards were listed.
  std::shared_ptr<const std::string> index_text;
};

class RecordSource {
 public:
  virtual ~RecordSource() = default;
  // The next record, or std::nullopt at the end. Errors name the shard and the byte offset:
  // kCorruption for malformed data, kIOError from the OS, kNotFound for a missing shard.
  virtual Result<std::optional<Record>> Next() = 0;
};

// The format an input names: *.tar, *.tar.gz, *.tgz, *.tar.zst -> kWebDataset; *.tfrecord,
// *.tfrecords, *.tfrec (optionally + .gz/.zst/.zlib) or a name with "-of-" sharding ->
// kTfRecord; a directory holding index.json, or an index.json file -> kMds, or kLitData when
// the index lists "chunks"; *.parquet -> kParquet; *.arrow, or a directory holding state.json
// (Dataset.save_to_disk) -> kArrow; else kAuto.
RecordFormat DetectRecordFormat(const std::string& input);

// Expands the inputs into shards, in order: brace patterns are expanded first
// (shard-{000000..000009}.tar); a directory contributes its files of `format` in sorted order
// (for MDS and LitData: the shards listed in its index.json, in index order; for a save_to_disk
// directory: state.json's data files); a file is one shard, but a Parquet file is one shard per
// row group (its footer is read here; a footer that does not parse gives one whole-file shard
// whose OpenRecordShard is the kCorruption, so that readers' skip policies apply to it).
// `format` kAuto detects each input's format (DetectRecordFormat) and fails naming an input it
// cannot classify. kNotFound for a missing input.
// Remote inputs (s3://, http(s)://; record_store.h) follow the same rules where an object store
// can: brace patterns, glob patterns ('*', '?', '[...]', s3:// only: one ListObjectsV2 listing),
// an index.json or a prefix holding one (MDS, LitData: one GET, sizes from the index), a prefix
// holding state.json (save_to_disk), a prefix with --input-format given (s3:// only: listed), or
// one object (one HEAD for its size; a Parquet file also reads its footer). No request is made per
// record, and none per shard beyond what its listing needs.
Result<std::vector<RecordShard>> ExpandRecordShards(const std::vector<std::string>& inputs,
                                                    RecordFormat format);

// Opens one shard (compression detected from the name and the first bytes).
Result<std::unique_ptr<RecordSource>> OpenRecordShard(const RecordShard& shard);

// All records of all shards of `inputs`, in order.
Result<std::unique_ptr<RecordSource>> OpenRecordSource(const std::vector<std::string>& inputs,
                                                       RecordFormat format = RecordFormat::kAuto);

}  // namespace stoker
