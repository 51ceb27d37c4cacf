// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as TFRecord uses it, and TensorFlow's
// masking of stored CRCs. Written here rather than taken from a library: a 256-entry table
// generated at compile time from the polynomial, and the SSE4.2 crc32 instruction when the CPU
// has it (checked once at run time). Plain functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stoker {

// Extends `crc` (0 to start) over `n` bytes: Crc32c(Crc32c(0, a), b) == Crc32c(0, a + b).
uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t n);
inline uint32_t Crc32c(const void* data, size_t n) { return Crc32cExtend(0, data, n); }

inline constexpr uint32_t kCrc32cMaskDelta = 0xa282ead8u;
// TensorFlow's masked CRC: rotate right by 15, add kCrc32cMaskDelta.
inline uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kCrc32cMaskDelta; }
inline uint32_t UnmaskCrc32c(uint32_t masked) {
  uint32_t rot = masked - kCrc32cMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace stoker
