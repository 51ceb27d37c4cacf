// SharedPart: one aligned part of a ByteSource, fetched once by the thread that claims it and
// shared with the readers that need it meanwhile: the claim/fetch/publish step of the part-based
// decorators (window_source.cc, part_cache_source.cc), which differ only in how they keep parts.
// Thread contract: a part's fields, and the owner's table of parts, are guarded by the owner's
// mutex (`lock` below); the fetching thread reads without it; the owner's condition variable
// `cv` is notified (the lock held) whenever a part is published.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "storage/byte_source.h"

namespace stoker::storage {

// How often a waiter that can be cancelled looks at its flags.
inline constexpr int kAwaitCancelCheckMs = 10;

struct SharedPart {
  std::string bytes;
  bool ready = false;  // published: bytes or error is final
  Status error;
};

// Waits on `cv` (`lock` held) until another thread publishes `part`: the part, or its error;
// kCancelled as soon as the calling thread's requests are cancelled (storage/cancel.h), within
// kAwaitCancelCheckMs.
Result<std::shared_ptr<const SharedPart>> AwaitPart(std::unique_lock<std::mutex>& lock,
                                                    std::condition_variable& cv,
                                                    std::shared_ptr<SharedPart> part);

// Fetches part `p` (bytes [p * part_bytes, ...) of `inner`) into `part`, which the caller has
// just claimed (put in its table, `lock` held): reads it without the lock, then, holding the lock
// again, publishes its bytes or its error and notifies `cv`. Returns with `lock` held, so that the
// caller can update its table (drop a failed part, evict) before any waiter runs.
Status FetchClaimedPart(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                        const ByteSource& inner, size_t part_bytes, uint64_t p, SharedPart& part);

// Serves ReadAt(offset, n, out) of a source of `size` bytes from its parts, which
// `get_part(p)` returns (a Result<std::shared_ptr<const SharedPart>>).
template <typename GetPart>
Result<size_t> ReadFromParts(uint64_t size, size_t part_bytes, uint64_t offset, size_t n, char* out,
                             GetPart&& get_part) {
  if (offset >= size) return size_t{0};
  const size_t total = static_cast<size_t>(std::min<uint64_t>(n, size - offset));
  for (size_t done = 0; done < total;) {
    const uint64_t at = offset + done;
    const uint64_t p = at / part_bytes;
    STOKER_ASSIGN_OR_RETURN(std::shared_ptr<const SharedPart> part, get_part(p));
    const size_t in_part = static_cast<size_t>(at - p * part_bytes);
    const size_t len = std::min(total - done, part->bytes.size() - in_part);
    std::memcpy(out + done, part->bytes.data() + in_part, len);
    done += len;
  }
  return total;
}

}  // namespace stoker::storage
