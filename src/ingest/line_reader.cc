#include "ingest/line_reader.h"

#include <cstring>

namespace stoker {

LineReader::LineReader(std::unique_ptr<ByteStream> stream)
    : stream_(std::move(stream)), buf_(1 << 20) {}

Status LineReader::Refill() {
  STOKER_ASSIGN_OR_RETURN(size_t n, stream_->Read(buf_.data(), buf_.size()));
  pos_ = 0;
  end_ = n;
  if (n == 0) eof_ = true;
  return Status::OK();
}

Result<bool> LineReader::Next(std::string* line) {
  line->clear();
  uint64_t start = consumed_;
  bool any = false;
  while (true) {
    if (pos_ == end_) {
      if (eof_) break;
      STOKER_RETURN_IF_ERROR(Refill());
      if (eof_) break;
    }
    any = true;
    const char* begin = buf_.data() + pos_;
    const void* nl = std::memchr(begin, '\n', end_ - pos_);
    size_t take = nl ? static_cast<const char*>(nl) - begin : end_ - pos_;
    line->append(begin, take);
    pos_ += take;
    consumed_ += take;
    if (nl) {
      ++pos_;
      ++consumed_;
      break;
    }
  }
  if (!any) return false;
  ++line_number_;
  line_offset_ = start;
  return true;
}

}  // namespace stoker
