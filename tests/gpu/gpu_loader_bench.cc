// GPU figures for scripts/gpu-check: copier bandwidth against a plain pinned cudaMemcpyAsync of the
// same bytes, and the consumer's stall when each step is a synthetic compute kernel.
//
//   gpu_loader_bench [STEP_MS (20)] [STEPS (200)]
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "busy_kernel.h"
#include "cuda/copier.h"
#include "loader/batch_layout.h"
#include "loader/loader_internal.h"
#include "loader/loader_test_util.h"

namespace {

using namespace stoker;
using Clock = std::chrono::steady_clock;

#define CHECK_CUDA(call)                                                                         \
  do {                                                                                           \
    cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

double PlainPinnedGBps(size_t bytes, int copies) {
  void* host = nullptr;
  void* dev = nullptr;
  CHECK_CUDA(cudaHostAlloc(&host, bytes, cudaHostAllocPortable));
  CHECK_CUDA(cudaMalloc(&dev, bytes));
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  CHECK_CUDA(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s));  // warm-up
  CHECK_CUDA(cudaEventRecord(a, s));
  for (int i = 0; i < copies; ++i) {
    CHECK_CUDA(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s));
  }
  CHECK_CUDA(cudaEventRecord(b, s));
  CHECK_CUDA(cudaEventSynchronize(b));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaStreamDestroy(s);
  cudaFree(dev);
  cudaFreeHost(host);
  return bytes * double(copies) / (ms * 1e-3) / 1e9;
}

// The loader's copier: copies into rotating device buffers, each waited for before reuse, as
// the engine does. Wall-clock bandwidth over all copies.
double CopierGBps(size_t bytes, int copies, double* gpu_gbps) {
  auto pinned = cuda::AllocPinned(bytes);
  if (!pinned.ok()) std::exit(1);
  auto copier = cuda::DeviceCopier::Open(0, bytes, 3);
  if (!copier.ok()) {
    std::fprintf(stderr, "%s\n", copier.status().ToString().c_str());
    std::exit(1);
  }
  cuda::DeviceCopier& c = **copier;
  (void)c.CopyAsync(0, *pinned, bytes);
  (void)c.WaitCopied(0);
  double gpu_ms = 0;
  auto t0 = Clock::now();
  for (int i = 0; i < copies; ++i) {
    int b = i % 3;
    if (i >= 3) {
      (void)c.WaitCopied(b);
      gpu_ms += c.LastCopyMs(b);
    }
    (void)c.CopyAsync(b, *pinned, bytes);
  }
  for (int i = copies; i < copies + 3; ++i) {
    (void)c.WaitCopied(i % 3);
    gpu_ms += c.LastCopyMs(i % 3);
  }
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  *gpu_gbps = bytes * double(copies) / (gpu_ms * 1e-3) / 1e9;
  copier->reset();
  cuda::FreePinned(*pinned);
  return bytes * double(copies) / secs / 1e9;
}

// A training loop: Next -> stream waits for the batch -> compute kernel reading it -> sync.
void ConsumerStall(double step_ms, int steps) {
  auto src = loader::testing::RandomSource(11, 20000, 1500);
  LoaderOptions o;
  o.batch_size = 32;
  o.seq_len = 2048;
  o.num_workers = 8;
  o.prefetch_factor = 4;
  o.device = 0;
  auto planner =
      std::make_shared<loader::testing::ScriptedPlanner>(src, o.seq_len, o.batch_size, 1);
  auto opened = loader::OpenLoaderWithPlanner(planner, {src}, o, {});
  if (!opened.ok()) {
    std::fprintf(stderr, "%s\n", opened.status().ToString().c_str());
    std::exit(1);
  }
  Loader& l = **opened;
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned long long* sum = nullptr;
  CHECK_CUDA(cudaMalloc(&sum, sizeof(*sum)));
  const long long cycles = static_cast<long long>(step_ms * gpu_test::CyclesPerMs(0));
  const int warmup = 5;
  double wait_at_warmup_ms = 0;
  Clock::time_point t0;
  for (int i = 0; i < steps + warmup;) {
    if (i == warmup) {
      wait_at_warmup_ms = l.Stats().wait_total_ms;
      t0 = Clock::now();
    }
    auto next = l.Next();
    if (!next.ok()) {
      std::fprintf(stderr, "%s\n", next.status().ToString().c_str());
      std::exit(1);
    }
    if (!next->has_value()) continue;
    LoaderBatch& b = **next;
    (void)b.WaitOnStream(s);
    CHECK_CUDA(cudaMemsetAsync(sum, 0, sizeof(*sum), s));
    gpu_test::LaunchSum(s, static_cast<const int64_t*>(b.device_input_ids().data),
                        o.batch_size * o.seq_len, sum);
    gpu_test::LaunchBusy(s, cycles);
    CHECK_CUDA(cudaStreamSynchronize(s));  // like loss.item() every step
    ++i;
  }
  const double wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  LoaderStats st = l.Stats();
  const double stall_ms = st.wait_total_ms - wait_at_warmup_ms;
  std::printf(
      "consumer: %d steps of %.1f ms compute, step %.2f ms, stall %.2f ms total = %.3f%% "
      "of step time (target <= 1%%); copy GPU time %.1f ms, %s ring\n",
      steps, step_ms, wall_ms / steps, stall_ms, 100.0 * stall_ms / wall_ms, st.copy_s * 1e3,
      st.pinned ? "pinned" : "unpinned");
  cudaFree(sum);
  cudaStreamDestroy(s);
}

}  // namespace

int main(int argc, char** argv) {
  const double step_ms = argc > 1 ? std::atof(argv[1]) : 20.0;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 200;
  if (cuda::DeviceCount() == 0) {
    std::fprintf(stderr, "gpu_loader_bench: no CUDA device\n");
    return 1;
  }
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  loader::AssemblyOptions a;
  a.batch_size = 32;
  a.seq_len = 2048;
  const size_t bytes = loader::BatchLayout::For(a).total_bytes;
  std::printf("device: %s; batch 32 x 2048 int64 = %.2f MB per copy\n", prop.name, bytes / 1e6);
  const double plain = PlainPinnedGBps(bytes, 500);
  double copier_gpu = 0;
  const double copier = CopierGBps(bytes, 500, &copier_gpu);
  std::printf("plain pinned cudaMemcpyAsync: %.2f GB/s\n", plain);
  std::printf("copier: %.2f GB/s wall (%.2f GB/s GPU time) = %.1f%% of plain (target >= 85%%)\n",
              copier, copier_gpu, 100.0 * copier / plain);
  const double big_plain = PlainPinnedGBps(64 << 20, 50);
  std::printf("plain pinned cudaMemcpyAsync, 64 MiB copies: %.2f GB/s\n", big_plain);
  ConsumerStall(step_ms, steps);
  return 0;
}
