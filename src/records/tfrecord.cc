#include "records/tfrecord.h"

#include <cstring>

#include "common/load.h"
#include "records/crc32c.h"
#include "records/tf_example.h"

namespace stoker {
namespace {

constexpr size_t kHeaderBytes = 12;

bool ValidHeader(const char* h) { return MaskCrc32c(Crc32c(h, 8)) == LoadAs<uint32_t>(h + 8); }

class TfRecordShard final : public RecordSource {
 public:
  TfRecordShard(std::unique_ptr<ByteStream> stream, std::string uri, bool compressed)
      : reader_(std::move(stream), uri, compressed), uri_(std::move(uri)) {}

  Result<std::optional<Record>> Next() override {
    STOKER_ASSIGN_OR_RETURN(std::optional<std::string> data, reader_.Next());
    if (!data) return std::optional<Record>();
    Record r{.key = std::to_string(index_),  // a braced list runs in order: before index_++
             .source = uri_,
             .index = index_++,
             .offset_bytes = reader_.record_offset()};
    Status st = DecodeTfExample(*data, &r.fields);
    if (!st.ok()) return st.WithContext(r.Where());
    return std::optional<Record>(std::move(r));
  }

 private:
  TfRecordReader reader_;
  std::string uri_;
  uint64_t index_ = 0;
};

}  // namespace

TfRecordReader::TfRecordReader(std::unique_ptr<ByteStream> stream, std::string uri, bool compressed)
    : stream_(std::move(stream)), uri_(std::move(uri)), compressed_(compressed) {}

Status TfRecordReader::Corrupt(uint64_t offset, const std::string& what) const {
  return Corruption(uri_ + ": " + what + " at byte offset " + std::to_string(offset) +
                    (compressed_ ? " of the decompressed data" : ""));
}

Result<std::optional<std::string>> TfRecordReader::Next() {
  record_offset_ = offset_;
  char h[kHeaderBytes];
  STOKER_ASSIGN_OR_RETURN(size_t got, ReadFully(*stream_, h, kHeaderBytes));
  offset_ += got;
  if (got == 0) return std::optional<std::string>();
  if (got < kHeaderBytes) return Corrupt(record_offset_, "truncated TFRecord header");
  if (!ValidHeader(h)) return Corrupt(record_offset_, "TFRecord length CRC mismatch");
  const uint64_t length = LoadAs<uint64_t>(h);
  // Grown as the data arrives (ReadUpTo): a (CRC-valid) huge length must not allocate unbacked.
  std::string data;
  Status read = ReadUpTo(*stream_, length, &data);
  offset_ += data.size();
  STOKER_RETURN_IF_ERROR(read);
  if (data.size() < length) {
    return Corrupt(record_offset_, "truncated TFRecord data (" + std::to_string(length) +
                                       " bytes expected, " + std::to_string(data.size()) +
                                       " present)");
  }
  char crc[4];
  STOKER_ASSIGN_OR_RETURN(got, ReadFully(*stream_, crc, 4));
  offset_ += got;
  if (got < 4) return Corrupt(record_offset_, "truncated TFRecord data CRC");
  if (MaskCrc32c(Crc32c(data.data(), data.size())) != LoadAs<uint32_t>(crc)) {
    return Corrupt(record_offset_, "TFRecord data CRC mismatch");
  }
  return std::optional<std::string>(std::move(data));
}

std::string FrameTfRecord(std::string_view data) {
  std::string out(kHeaderBytes, '\0');
  uint64_t length = data.size();
  std::memcpy(out.data(), &length, 8);
  uint32_t c = MaskCrc32c(Crc32c(out.data(), 8));
  std::memcpy(out.data() + 8, &c, 4);
  out.append(data);
  c = MaskCrc32c(Crc32c(data.data(), data.size()));
  out.append(reinterpret_cast<const char*>(&c), 4);
  return out;
}

Compression DetectTfRecordCompression(const ByteSource& source) {
  const std::string& name = source.uri();
  if (name.ends_with(".gz") || name.ends_with(".zlib")) return Compression::kGzip;
  if (name.ends_with(".zst") || name.ends_with(".zstd")) return Compression::kZstd;
  char head[kHeaderBytes];
  Result<size_t> got = source.ReadAt(0, kHeaderBytes, head);
  if (!got.ok() || *got == 0) return Compression::kNone;
  if (*got == kHeaderBytes && ValidHeader(head)) return Compression::kNone;
  return SniffCompression(std::string_view(head, *got));
}

std::unique_ptr<RecordSource> OpenTfRecordShard(std::shared_ptr<const ByteSource> source) {
  Compression c = DetectTfRecordCompression(*source);
  std::string uri = source->uri();
  return std::make_unique<TfRecordShard>(OpenSourceStream(std::move(source), c), std::move(uri),
                                         c != Compression::kNone);
}

}  // namespace stoker
