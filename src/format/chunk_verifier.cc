#include "stoker/chunk_verifier.h"

#include <bit>

namespace stoker {

ChunkVerifier::ChunkVerifier(uint64_t num_elements, uint32_t chunk_shift,
                             std::function<Status(uint64_t chunk)> verify)
    : num_chunks_((num_elements + (uint64_t{1} << chunk_shift) - 1) >> chunk_shift),
      chunk_shift_(chunk_shift),
      verify_(std::move(verify)),
      bits_(new std::atomic<uint64_t>[(num_chunks_ + 63) / 64 + 1]) {
  for (uint64_t w = 0; w < (num_chunks_ + 63) / 64 + 1; ++w) bits_[w].store(0);
}

void ChunkVerifier::VerifySlow(uint64_t chunk) const {
  Status st = verify_(chunk);
  if (!st.ok()) {
    std::lock_guard lock(mu_);
    if (first_error_.ok()) first_error_ = std::move(st);
    failed_.store(true, std::memory_order_release);
  }
  // Set after the failure is recorded: a reader that sees the bit and then asks status() sees it.
  bits_[chunk >> 6].fetch_or(uint64_t{1} << (chunk & 63), std::memory_order_acq_rel);
}

Status ChunkVerifier::status() const {
  if (!failed_.load(std::memory_order_acquire)) return Status::OK();
  std::lock_guard lock(mu_);
  return first_error_;
}

Status ChunkVerifier::VerifyAll() const {
  for (uint64_t c = 0; c < num_chunks_; ++c) Touch(c << chunk_shift_);
  return status();
}

uint64_t ChunkVerifier::chunks_verified() const {
  uint64_t n = 0;
  for (uint64_t w = 0; w < (num_chunks_ + 63) / 64; ++w) {
    n += static_cast<uint64_t>(std::popcount(bits_[w].load(std::memory_order_acquire)));
  }
  return n;
}

}  // namespace stoker
