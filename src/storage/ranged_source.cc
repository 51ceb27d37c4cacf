#include "storage/ranged_source.h"

#include <algorithm>

namespace stoker::storage {
namespace {

class RangedSource final : public ByteSource {
 public:
  RangedSource(std::string uri, uint64_t size, size_t part_bytes, RangeFetch fetch)
      : uri_(std::move(uri)),
        size_(size),
        part_bytes_(std::max<size_t>(part_bytes, 1)),
        fetch_(std::move(fetch)) {}
  const std::string& uri() const override { return uri_; }
  uint64_t size_bytes() const override { return size_; }

  Result<size_t> ReadAt(uint64_t offset, size_t n, char* out) const override {
    if (offset >= size_) return size_t{0};
    const size_t total = static_cast<size_t>(std::min<uint64_t>(n, size_ - offset));
    for (size_t done = 0; done < total;) {
      const size_t len = std::min(part_bytes_, total - done);
      Status status = fetch_(offset + done, len, out + done);
      if (!status.ok()) return status;
      done += len;
    }
    return total;
  }

 private:
  std::string uri_;
  uint64_t size_;
  size_t part_bytes_;
  RangeFetch fetch_;
};

}  // namespace

std::unique_ptr<ByteSource> NewRangedSource(std::string uri, uint64_t size_bytes, size_t part_bytes,
                                            RangeFetch fetch) {
  return std::make_unique<RangedSource>(std::move(uri), size_bytes, part_bytes, std::move(fetch));
}

}  // namespace stoker::storage
