// Kernels for the GPU tests and the GPU benchmark (tests/gpu/busy_kernel.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace stoker::gpu_test {

// Spins one thread on `stream` for `cycles` SM clock cycles (a stand-in for a training step).
void LaunchBusy(cudaStream_t stream, long long cycles);
// *out += sum of values[0..n) (out must be zeroed device memory).
void LaunchSum(cudaStream_t stream, const int64_t* values, int64_t n, unsigned long long* out);
// SM clock cycles per millisecond on `device` (cudaDevAttrClockRate is in kHz).
long long CyclesPerMs(int device);

}  // namespace stoker::gpu_test
