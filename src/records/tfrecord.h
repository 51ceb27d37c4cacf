// TFRecord files: the record framing (u64 length, masked CRC-32C of the length, data, masked
// CRC-32C of the data), reading and writing, and a RecordSource of tf.train.Example records.
// Both CRCs are always verified. Not thread-safe: one user at a time per reader or writer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "records/byte_stream.h"
#include "records/record_source.h"
#include "storage/byte_source.h"

namespace stoker {

// Splits a TFRecord stream into its records' data.
class TfRecordReader {
 public:
  // `uri` names the file in errors; `compressed` says that offsets are in decompressed data.
  TfRecordReader(std::unique_ptr<ByteStream> stream, std::string uri, bool compressed);

  // The next record's data, or std::nullopt at the end (exactly at a record boundary).
  // kCorruption naming the file and byte offset for a truncated record or a CRC mismatch.
  Result<std::optional<std::string>> Next();
  // Byte offset of the record last returned.
  uint64_t record_offset() const { return record_offset_; }

 private:
  Status Corrupt(uint64_t offset, const std::string& what) const;

  std::unique_ptr<ByteStream> stream_;
  std::string uri_;
  bool compressed_;
  uint64_t offset_ = 0;
  uint64_t record_offset_ = 0;
};

// The framing of one record around `data` (what TFRecordWriter writes).
std::string FrameTfRecord(std::string_view data);

// The compression of a TFRecord file: by name (.gz, .zlib -> kGzip; .zst -> kZstd), else by
// its first bytes (a valid length CRC means uncompressed; else a gzip/zlib/zstd header).
Compression DetectTfRecordCompression(const ByteSource& source);

// tf.train.Example records of one TFRecord file as Records (key = record index in decimal).
std::unique_ptr<RecordSource> OpenTfRecordShard(std::shared_ptr<const ByteSource> source);

}  // namespace stoker
