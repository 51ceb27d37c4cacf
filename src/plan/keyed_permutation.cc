#include "plan/keyed_permutation.h"

namespace stoker::plan {

KeyedPermutation::KeyedPermutation(uint64_t n, uint64_t key) : n_(n) {
  // Domain 2^(2h) >= n with h >= 1, so cycle walking needs fewer than 4 rounds trips on average.
  int bits = 2;
  while (bits < 64 && (uint64_t{1} << bits) < n) bits += 2;
  half_bits_ = bits / 2;
  half_mask_ = (uint64_t{1} << half_bits_) - 1;
  for (int r = 0; r < kRounds; ++r) round_keys_[r] = DeriveKey(key, 0x5157u + r);
}

uint64_t KeyedPermutation::Encrypt(uint64_t x) const {
  uint64_t left = x >> half_bits_;
  uint64_t right = x & half_mask_;
  for (int r = 0; r < kRounds; ++r) {
    uint64_t f = Mix64(right ^ round_keys_[r]) & half_mask_;
    uint64_t next = left ^ f;
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

uint64_t KeyedPermutation::Apply(uint64_t i) const {
  if (n_ <= 1) return i;
  // Cycle walking: re-encrypt until the value lands inside [0, n); a bijection on the domain
  // restricted this way is a bijection on [0, n).
  uint64_t x = Encrypt(i);
  while (x >= n_) x = Encrypt(x);
  return x;
}

}  // namespace stoker::plan
