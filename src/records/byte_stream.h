// ByteStream: sequential reads of an object's bytes (a ByteSource), decompressing gzip/zlib and
// zstd data on the fly. Used for JSONL and text inputs and by the record readers (tar, TFRecord,
// MDS shards); only one descriptor is open per stream. Not thread-safe: one user at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "stoker/status.h"
#include "storage/byte_source.h"

namespace stoker {

enum class Compression { kNone, kGzip, kZstd };

// Compression implied by a file name: ".gz" -> kGzip, ".zst"/".zstd" -> kZstd, else kNone.
Compression CompressionFromName(std::string_view path);
// The name without its compression suffix ("a.jsonl.zst" -> "a.jsonl").
std::string_view StripCompressionSuffix(std::string_view path);

class ByteStream {
 public:
  virtual ~ByteStream() = default;

  // Reads up to `capacity` decompressed bytes into `buf`; returns 0 only at the end of the data.
  // Errors name the file and, for corrupt or truncated compressed data, the compressed byte
  // offset (kCorruption), or the OS error (kIOError).
  virtual Result<size_t> Read(char* buf, size_t capacity) = 0;
  // Expected decompressed size when cheaply known (plain files), else 0.
  virtual uint64_t size_hint_bytes() const { return 0; }
};

// Opens `path`, decompressing according to CompressionFromName(path). kNotFound if missing.
Result<std::unique_ptr<ByteStream>> OpenByteStream(const std::string& path);

// A stream over `source` from byte `start`, decompressed as `compression` says (kGzip also
// accepts a zlib stream: the header is detected). Errors name source->uri().
std::unique_ptr<ByteStream> OpenSourceStream(std::shared_ptr<const ByteSource> source,
                                             Compression compression, uint64_t start = 0);

// The compression that the first bytes of an object announce: the gzip magic 1f 8b, the zstd
// magic 28 b5 2f fd, or a zlib header (CMF/FLG with a valid check); else kNone.
Compression SniffCompression(std::string_view head);

// Reads until `n` bytes are in `buf` or the stream ends; returns the count.
Result<size_t> ReadFully(ByteStream& stream, char* buf, size_t n);
// Reads until *out (replaced) holds `n` bytes or the stream ends, growing it as the data arrives so
// that a corrupt length cannot allocate gigabytes. After an error *out holds the bytes before it.
Status ReadUpTo(ByteStream& stream, uint64_t n, std::string* out);
// Appends the rest of `stream` to *out; kCorruption "<where>: decompresses past <limit_gib> GiB"
// once *out holds more than that.
Status ReadAllFrom(ByteStream& stream, uint64_t limit_gib, const std::string& where,
                   std::string* out);

// Reads a whole (possibly compressed) file into *out (replacing its contents).
Status ReadAllDecompressed(const std::string& path, std::string* out);
// Reads the rest of `stream` into *out (replacing its contents).
Status ReadAllDecompressed(ByteStream& stream, std::string* out);

}  // namespace stoker
