#include "storage/shared_part.h"

#include <algorithm>

namespace stoker::storage {

Result<std::shared_ptr<const SharedPart>> AwaitPart(std::unique_lock<std::mutex>& lock,
                                                    std::condition_variable& cv,
                                                    std::shared_ptr<SharedPart> part) {
  cv.wait(lock, [&] { return part->ready; });
  if (!part->error.ok()) return part->error;
  return std::shared_ptr<const SharedPart>(std::move(part));
}

Status FetchClaimedPart(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                        const ByteSource& inner, size_t part_bytes, uint64_t p, SharedPart& part) {
  lock.unlock();
  const uint64_t begin = p * part_bytes;
  const size_t len =
      static_cast<size_t>(std::min<uint64_t>(part_bytes, inner.size_bytes() - begin));
  std::string bytes(len, '\0');
  Status status = ReadExactlyAt(inner, begin, len, bytes.data(), "part");
  lock.lock();
  part.bytes = std::move(bytes);
  part.error = status;
  part.ready = true;
  cv.notify_all();
  return status;
}

}  // namespace stoker::storage
