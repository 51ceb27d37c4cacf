#include "storage/shared_part.h"

#include <algorithm>
#include <chrono>

#include "storage/cancel.h"

namespace stoker::storage {

Result<std::shared_ptr<const SharedPart>> AwaitPart(std::unique_lock<std::mutex>& lock,
                                                    std::condition_variable& cv,
                                                    std::shared_ptr<SharedPart> part) {
  const auto ready = [&] { return part->ready; };
  if (CurrentCancelScope() == nullptr) {
    cv.wait(lock, ready);  // nothing can cancel this thread
  } else {
    // The fetching thread may be stalled on a request that only its own scope can abort (a
    // fetch-ahead thread's), so the waiter looks at its own flags: closing a loader must not wait
    // for another thread's stalled request. Setting a flag wakes nobody, hence the polling.
    while (!cv.wait_for(lock, std::chrono::milliseconds(kAwaitCancelCheckMs), ready)) {
      if (CancelRequested()) {
        return Cancelled("cancelled while waiting for another thread's fetch of the part");
      }
    }
  }
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
