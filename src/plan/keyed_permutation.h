// KeyedPermutation: a pseudo-random bijection over [0, n) chosen by a 64-bit key, evaluated in O(1)
// memory per lookup (a Feistel network over the next even power of two, with cycle walking).
// Plain value. Thread-safe: Apply is const.
#pragma once

#include <cstdint>

#include "format/length_hash.h"

namespace stoker::plan {

// SplitMix64's finaliser (shared with the fingerprint hash and the length index).
using stoker::Mix64;

// Derives a key from a parent key and a label (e.g. an epoch or a window index).
inline uint64_t DeriveKey(uint64_t key, uint64_t label) { return Mix64(key ^ Mix64(label)); }

class KeyedPermutation {
 public:
  KeyedPermutation(uint64_t n, uint64_t key);

  uint64_t size() const { return n_; }
  // The image of i (i < size()).
  uint64_t Apply(uint64_t i) const;

 private:
  static constexpr int kRounds = 6;
  uint64_t Encrypt(uint64_t x) const;

  uint64_t n_;
  int half_bits_ = 0;
  uint64_t half_mask_ = 0;
  uint64_t round_keys_[kRounds] = {};
};

}  // namespace stoker::plan
