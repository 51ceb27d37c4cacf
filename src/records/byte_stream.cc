#include "records/byte_stream.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace stoker {
namespace {

constexpr size_t kInputChunkBytes = 256 * 1024;

// Sequential raw (compressed) reads over a ByteSource, shared by every stream kind.
class RawFile {
 public:
  RawFile(std::shared_ptr<const ByteSource> source, uint64_t start)
      : source_(std::move(source)), offset_(start) {}
  const std::string& path() const { return source_->uri(); }
  uint64_t offset() const { return offset_; }
  uint64_t size_bytes() const { return source_->size_bytes(); }

  Result<size_t> Read(char* buf, size_t capacity) {
    STOKER_ASSIGN_OR_RETURN(size_t n, source_->ReadAt(offset_, capacity, buf));
    offset_ += n;
    return n;
  }

 private:
  std::shared_ptr<const ByteSource> source_;
  uint64_t offset_;
};

// Small reads (a 512-byte tar header, a 12-byte TFRecord header) are served from a buffer
// filled kInputChunkBytes at a time, so a reader of small records makes few system calls; a
// read at least that large, or reaching the end of the file, goes straight to the file.
class PlainStream final : public ByteStream {
 public:
  explicit PlainStream(std::unique_ptr<RawFile> file) : file_(std::move(file)) {}
  Result<size_t> Read(char* buf, size_t capacity) override {
    if (pos_ == end_) {
      uint64_t size = file_->size_bytes(), offset = file_->offset();
      uint64_t remaining = size > offset ? size - offset : 0;
      if (capacity >= kInputChunkBytes || capacity >= remaining) return file_->Read(buf, capacity);
      if (buf_.empty())
        buf_.resize(static_cast<size_t>(std::min<uint64_t>(kInputChunkBytes, remaining)));
      STOKER_ASSIGN_OR_RETURN(end_, file_->Read(buf_.data(), buf_.size()));
      pos_ = 0;
      if (end_ == 0) return size_t{0};
    }
    size_t n = std::min(capacity, end_ - pos_);
    std::memcpy(buf, buf_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  uint64_t size_hint_bytes() const override { return file_->size_bytes(); }

 private:
  std::unique_ptr<RawFile> file_;
  std::vector<char> buf_;
  size_t pos_ = 0;
  size_t end_ = 0;
};

class GzipStream final : public ByteStream {
 public:
  explicit GzipStream(std::unique_ptr<RawFile> file)
      : file_(std::move(file)), in_(kInputChunkBytes) {
    // 15 + 32: any window size, gzip or zlib header detected automatically.
    ok_ = inflateInit2(&z_, 15 + 32) == Z_OK;
  }
  ~GzipStream() override { inflateEnd(&z_); }

  Result<size_t> Read(char* buf, size_t capacity) override {
    if (!ok_) return Internal(file_->path() + ": cannot initialise zlib");
    z_.next_out = reinterpret_cast<Bytef*>(buf);
    z_.avail_out = static_cast<uInt>(capacity);
    while (z_.avail_out == capacity) {
      if (z_.avail_in == 0) {
        STOKER_ASSIGN_OR_RETURN(size_t n, file_->Read(in_.data(), in_.size()));
        if (n == 0) {
          if (in_member_) {
            return Corruption(file_->path() + ": truncated gzip data at compressed byte offset " +
                              std::to_string(file_->offset()));
          }
          break;
        }
        z_.next_in = reinterpret_cast<Bytef*>(in_.data());
        z_.avail_in = static_cast<uInt>(n);
      }
      in_member_ = true;
      int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        // A .gz may hold several members (e.g. `cat a.gz b.gz`); continue with the next one.
        in_member_ = false;
        inflateReset(&z_);
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return Corruption(file_->path() + ": corrupt gzip data near compressed byte offset " +
                          std::to_string(file_->offset() - z_.avail_in) + " (" +
                          (z_.msg ? z_.msg : "zlib error " + std::to_string(rc)) + ")");
      }
    }
    return capacity - z_.avail_out;
  }

 private:
  std::unique_ptr<RawFile> file_;
  std::vector<char> in_;
  z_stream z_{};
  bool ok_ = false;
  bool in_member_ = false;
};

class ZstdStream final : public ByteStream {
 public:
  explicit ZstdStream(std::unique_ptr<RawFile> file)
      : file_(std::move(file)), in_(kInputChunkBytes), dctx_(ZSTD_createDCtx()) {}
  ~ZstdStream() override { ZSTD_freeDCtx(dctx_); }

  Result<size_t> Read(char* buf, size_t capacity) override {
    if (dctx_ == nullptr) return Internal(file_->path() + ": cannot create a zstd context");
    ZSTD_outBuffer out{buf, capacity, 0};
    while (out.pos == 0) {
      if (input_.pos == input_.size) {
        STOKER_ASSIGN_OR_RETURN(size_t n, file_->Read(in_.data(), in_.size()));
        if (n == 0) {
          if (frame_remaining_ != 0) {
            return Corruption(file_->path() + ": truncated zstd data at compressed byte offset " +
                              std::to_string(file_->offset()));
          }
          break;
        }
        input_ = ZSTD_inBuffer{in_.data(), n, 0};
      }
      size_t rc = ZSTD_decompressStream(dctx_, &out, &input_);
      if (ZSTD_isError(rc)) {
        return Corruption(file_->path() + ": corrupt zstd data near compressed byte offset " +
                          std::to_string(file_->offset() - (input_.size - input_.pos)) + " (" +
                          ZSTD_getErrorName(rc) + ")");
      }
      frame_remaining_ = rc;  // 0 exactly when a frame has just been completed
    }
    return out.pos;
  }

 private:
  std::unique_ptr<RawFile> file_;
  std::vector<char> in_;
  ZSTD_DCtx* dctx_;
  ZSTD_inBuffer input_{nullptr, 0, 0};
  size_t frame_remaining_ = 0;
};

}  // namespace

Compression CompressionFromName(std::string_view path) {
  if (path.ends_with(".gz")) return Compression::kGzip;
  if (path.ends_with(".zst") || path.ends_with(".zstd")) return Compression::kZstd;
  return Compression::kNone;
}

std::string_view StripCompressionSuffix(std::string_view path) {
  for (std::string_view suffix : {".gz", ".zst", ".zstd"}) {
    if (path.ends_with(suffix)) return path.substr(0, path.size() - suffix.size());
  }
  return path;
}

std::unique_ptr<ByteStream> OpenSourceStream(std::shared_ptr<const ByteSource> source,
                                             Compression compression, uint64_t start) {
  auto file = std::make_unique<RawFile>(std::move(source), start);
  switch (compression) {
    case Compression::kGzip:
      return std::make_unique<GzipStream>(std::move(file));
    case Compression::kZstd:
      return std::make_unique<ZstdStream>(std::move(file));
    case Compression::kNone:
      break;
  }
  return std::make_unique<PlainStream>(std::move(file));
}

Result<std::unique_ptr<ByteStream>> OpenByteStream(const std::string& path) {
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenFileSource(path));
  return OpenSourceStream(std::move(source), CompressionFromName(path));
}

Compression SniffCompression(std::string_view head) {
  auto byte = [&](size_t i) { return static_cast<uint8_t>(head[i]); };
  if (head.size() >= 2 && byte(0) == 0x1f && byte(1) == 0x8b) return Compression::kGzip;
  if (head.size() >= 4 && byte(0) == 0x28 && byte(1) == 0xb5 && byte(2) == 0x2f &&
      byte(3) == 0xfd) {
    return Compression::kZstd;
  }
  // zlib: CM = 8 (deflate), CINFO <= 7, and (CMF * 256 + FLG) a multiple of 31.
  if (head.size() >= 2 && (byte(0) & 0x0f) == 8 && (byte(0) >> 4) <= 7 &&
      (byte(0) * 256 + byte(1)) % 31 == 0) {
    return Compression::kGzip;
  }
  return Compression::kNone;
}

Result<size_t> ReadFully(ByteStream& stream, char* buf, size_t n) {
  size_t done = 0;
  while (done < n) {
    STOKER_ASSIGN_OR_RETURN(size_t got, stream.Read(buf + done, n - done));
    if (got == 0) break;
    done += got;
  }
  return done;
}

Status ReadUpTo(ByteStream& stream, uint64_t n, std::string* out) {
  out->clear();
  uint64_t got = 0;
  while (got < n) {
    size_t step =
        static_cast<size_t>(std::min<uint64_t>(n - got, std::max<uint64_t>(got, 1 << 20)));
    out->resize(got + step);
    Result<size_t> r = ReadFully(stream, out->data() + got, step);
    if (!r.ok()) out->resize(got);
    STOKER_RETURN_IF_ERROR(r.status());
    got += *r;
    if (*r < step) break;
  }
  out->resize(got);
  return Status::OK();
}

Status ReadAllFrom(ByteStream& stream, uint64_t limit_gib, const std::string& where,
                   std::string* out) {
  char buf[1 << 16];
  while (true) {
    STOKER_ASSIGN_OR_RETURN(size_t n, stream.Read(buf, sizeof buf));
    if (n == 0) return Status::OK();
    out->append(buf, n);
    if (out->size() > (limit_gib << 30)) {
      return Corruption(where + ": decompresses past " + std::to_string(limit_gib) + " GiB");
    }
  }
}

Status ReadAllDecompressed(const std::string& path, std::string* out) {
  out->clear();
  STOKER_ASSIGN_OR_RETURN(auto stream, OpenByteStream(path));
  return ReadAllDecompressed(*stream, out);
}

Status ReadAllDecompressed(ByteStream& stream_ref, std::string* out) {
  out->clear();
  ByteStream* stream = &stream_ref;
  // Size the buffer from the hint (+1 to see the end in the same pass), so that a million small
  // documents do not each hold a 64 KiB buffer.
  size_t step = static_cast<size_t>(stream->size_hint_bytes()) + 1;
  if (step == 1) step = 64 * 1024;
  while (true) {
    size_t old = out->size();
    out->resize(old + step);
    STOKER_ASSIGN_OR_RETURN(size_t n, stream->Read(out->data() + old, step));
    out->resize(old + n);
    if (n == 0) break;
    step = std::max<size_t>(64 * 1024, out->size());
  }
  if (out->capacity() > 2 * out->size() + 64) out->shrink_to_fit();
  return Status::OK();
}

}  // namespace stoker
