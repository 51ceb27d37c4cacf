// Kernels for the GPU tests: a busy kernel (spins for a number of clock cycles) that stands in for
// a training step, and a checksum kernel that reads a batch on the device.
#include "busy_kernel.h"

namespace stoker::gpu_test {
namespace {

__global__ void Spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

__global__ void Sum(const long long* values, long long n, unsigned long long* out) {
  unsigned long long local = 0;
  for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    local += static_cast<unsigned long long>(values[i]);
  }
  atomicAdd(out, local);
}

}  // namespace

void LaunchBusy(cudaStream_t stream, long long cycles) { Spin<<<1, 1, 0, stream>>>(cycles); }

void LaunchSum(cudaStream_t stream, const int64_t* values, int64_t n, unsigned long long* out) {
  Sum<<<64, 256, 0, stream>>>(reinterpret_cast<const long long*>(values), n, out);
}

long long CyclesPerMs(int device) {
  // Calibrated with events rather than read from the clock-rate attribute, which CUDA 13 dropped
  // from cudaDeviceProp and which ignores boost clocks anyway.
  cudaSetDevice(device);
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  const long long cycles = 20'000'000;
  Spin<<<1, 1, 0, s>>>(cycles / 10);  // warm up the clocks
  cudaEventRecord(a, s);
  Spin<<<1, 1, 0, s>>>(cycles);
  cudaEventRecord(b, s);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaStreamDestroy(s);
  return ms > 0 ? static_cast<long long>(cycles / ms) : 1'500'000;
}

}  // namespace stoker::gpu_test
