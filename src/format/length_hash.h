// The plan fingerprint's hash: a chain of SplitMix64 finalisers over 64-bit values. The length
// index stores this hash of a dataset's document lengths in its header, so that the plan's
// fingerprint of a mapped dataset needs no pass over the lengths (docs/plan.md).
// Plain value; not thread-safe (one user at a time).
#pragma once

#include <cstdint>
#include <cstring>

namespace stoker {

// SplitMix64's finaliser: a strong 64-bit mixer (bijective).
inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// h <- Mix64(h ^ Mix64(v + n)) for the n-th value: order-sensitive, and the n keeps runs of equal
// values apart. The plan fingerprint hashes each dataset's lengths with a fresh FingerprintHasher,
// then the counts, that hash, the shard boundaries and the options with another.
class FingerprintHasher {
 public:
  void Add(uint64_t v) { h_ = Mix64(h_ ^ Mix64(v + ++n_)); }
  void AddDouble(double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    Add(bits);
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0x73746f6b65722d70ULL;  // "stoker-p"
  uint64_t n_ = 0;
};

}  // namespace stoker
