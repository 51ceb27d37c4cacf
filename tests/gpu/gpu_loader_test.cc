// GPU tests (built with -DSTOKER_BUILD_GPU_TESTS=ON; run by
// scripts/gpu-check): device batches equal host batches, the consumer's stream waits only for its
// own batch, and copies overlap a busy kernel.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

#include "busy_kernel.h"
#include "cuda/copier.h"
#include "loader/loader_test_util.h"

namespace stoker::loader {
namespace {

using testing::BatchDump;
using testing::Dump;

constexpr uint64_t kSeq = 256;
constexpr uint64_t kBatch = 8;

#define REQUIRE_DEVICE() \
  if (cuda::DeviceCount() == 0) GTEST_SKIP() << "no CUDA device here"

std::shared_ptr<MemoryTokenSource> Source() { return testing::RandomSource(3, 2000, 700); }

LoaderOptions Options(int device) {
  LoaderOptions o;
  o.batch_size = kBatch;
  o.seq_len = kSeq;
  o.num_workers = 4;
  o.device = device;
  o.attention_mask = true;  // the mask travels too
  return o;
}

std::unique_ptr<Loader> Open(std::shared_ptr<const TokenSource> src, const LoaderOptions& o) {
  auto planner = std::make_shared<testing::ScriptedPlanner>(src, kSeq, kBatch, 5);
  auto r = Loader::OpenWithPlanner(planner, {src}, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : nullptr;
}

std::vector<uint8_t> DeviceBytes(const TensorView& v, size_t elem) {
  size_t n = elem;
  for (int i = 0; i < v.ndim; ++i) n *= v.shape[i];
  std::vector<uint8_t> out(n);
  EXPECT_EQ(cudaMemcpy(out.data(), v.data, n, cudaMemcpyDeviceToHost), cudaSuccess);
  return out;
}

std::vector<uint8_t> HostBytes(const TensorView& v, size_t elem) {
  size_t n = elem;
  for (int i = 0; i < v.ndim; ++i) n *= v.shape[i];
  const auto* p = static_cast<const uint8_t*>(v.data);
  return std::vector<uint8_t>(p, p + n);
}

unsigned long long HostSum(const LoaderBatch& b) {
  unsigned long long sum = 0;
  const auto* ids = static_cast<const int64_t*>(b.input_ids().data);
  for (uint64_t k = 0; k < kBatch * kSeq; ++k) sum += static_cast<unsigned long long>(ids[k]);
  return sum;
}

TEST(GpuLoaderTest, DeviceBatchesEqualHostBatches) {
  REQUIRE_DEVICE();
  auto src = Source();
  auto gpu = Open(src, Options(0));
  auto host = Open(src, Options(-1));
  ASSERT_TRUE(gpu && host);
  EXPECT_TRUE(gpu->Stats().device_batches);
  EXPECT_TRUE(gpu->Stats().pinned);
  int n = 0;
  while (true) {
    auto g = gpu->Next();
    auto h = host->Next();
    ASSERT_TRUE(g.ok() && h.ok()) << g.status().ToString();
    ASSERT_EQ(g->has_value(), h->has_value());
    if (!g->has_value()) break;
    LoaderBatch& gb = **g;
    const LoaderBatch& hb = **h;
    ASSERT_TRUE(gb.on_device());
    ASSERT_TRUE(gb.Synchronize().ok());
    EXPECT_EQ(Dump(gb), Dump(hb)) << "host side of the device batch";
    EXPECT_EQ(DeviceBytes(gb.device_input_ids(), 8), HostBytes(hb.input_ids(), 8)) << n;
    EXPECT_EQ(DeviceBytes(gb.device_labels(), 8), HostBytes(hb.labels(), 8)) << n;
    EXPECT_EQ(DeviceBytes(gb.device_position_ids(), 8), HostBytes(hb.position_ids(), 8)) << n;
    EXPECT_EQ(DeviceBytes(gb.device_segment_ids(), 8), HostBytes(hb.segment_ids(), 8)) << n;
    EXPECT_EQ(DeviceBytes(gb.device_cu_seqlens(), 4), HostBytes(hb.cu_seqlens(), 4)) << n;
    EXPECT_EQ(DeviceBytes(gb.device_attention_mask(), 1), HostBytes(hb.attention_mask(), 1)) << n;
    ++n;
  }
  EXPECT_GT(n, 10);
}

TEST(GpuLoaderTest, ConsumerStreamSeesItsBatchAfterWaitOnStream) {
  REQUIRE_DEVICE();
  auto src = Source();
  auto gpu = Open(src, Options(0));
  ASSERT_NE(gpu, nullptr);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  unsigned long long* sum = nullptr;
  ASSERT_EQ(cudaMalloc(&sum, sizeof(*sum)), cudaSuccess);
  for (int i = 0; i < 40; ++i) {
    auto r = gpu->Next();
    ASSERT_TRUE(r.ok());
    if (!r->has_value()) continue;
    LoaderBatch& b = **r;
    // No host synchronization with the copy: the stream waits for it on the GPU.
    ASSERT_TRUE(b.WaitOnStream(stream).ok());
    ASSERT_EQ(cudaMemsetAsync(sum, 0, sizeof(*sum), stream), cudaSuccess);
    gpu_test::LaunchSum(stream, static_cast<const int64_t*>(b.device_input_ids().data),
                        kBatch * kSeq, sum);
    unsigned long long got = 0;
    ASSERT_EQ(cudaMemcpyAsync(&got, sum, sizeof(got), cudaMemcpyDeviceToHost, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_EQ(got, HostSum(b)) << "batch " << i;
  }  // each release records "consumed" on `stream` before the buffer is reused
  cudaFree(sum);
  cudaStreamDestroy(stream);
}

TEST(GpuLoaderTest, CopiesOverlapABusyKernel) {
  REQUIRE_DEVICE();
  auto src = Source();
  LoaderOptions o = Options(0);
  o.device_buffers = 3;
  auto gpu = Open(src, o);
  ASSERT_NE(gpu, nullptr);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  auto first = gpu->Next();
  ASSERT_TRUE(first.ok() && first->has_value());
  ASSERT_TRUE((*first)->WaitOnStream(stream).ok());
  // A "training step" of ~500 ms on the consumer's stream.
  gpu_test::LaunchBusy(stream, 500 * gpu_test::CyclesPerMs(0));
  // Batches 2 and 3 may have been copied before the kernel started; releasing them (no stream
  // recorded) frees their buffers, so the copies of batches 4 and 5 are issued only now.
  for (int i = 0; i < 2; ++i) {
    auto early = gpu->Next();
    ASSERT_TRUE(early.ok() && early->has_value());
  }
  int copied_during_kernel = 0;
  for (int i = 0; i < 2; ++i) {
    auto next = gpu->Next();
    ASSERT_TRUE(next.ok() && next->has_value());
    ASSERT_TRUE((*next)->Synchronize().ok());
    // The copy finished while the kernel still runs: the copier's stream overlaps the consumer's.
    if (cudaStreamQuery(stream) == cudaErrorNotReady) ++copied_during_kernel;
  }
  EXPECT_EQ(copied_during_kernel, 2);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  first->reset();  // it remembers `stream`: release it before the stream goes away
  cudaStreamDestroy(stream);
}

TEST(GpuLoaderTest, ReleasedBufferIsNotOverwrittenWhileQueuedKernelsReadIt) {
  REQUIRE_DEVICE();
  auto src = Source();
  LoaderOptions o = Options(0);
  o.device_buffers = 2;
  auto gpu = Open(src, o);
  ASSERT_NE(gpu, nullptr);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  unsigned long long* sum = nullptr;
  ASSERT_EQ(cudaMalloc(&sum, sizeof(*sum)), cudaSuccess);
  ASSERT_EQ(cudaMemset(sum, 0, sizeof(*sum)), cudaSuccess);
  unsigned long long want = 0;
  {
    auto first = gpu->Next();
    ASSERT_TRUE(first.ok() && first->has_value());
    want = HostSum(**first);
    ASSERT_TRUE((*first)->WaitOnStream(stream).ok());
    // Queued work that reads the buffer late: a long spin, then the sum.
    gpu_test::LaunchBusy(stream, 300 * gpu_test::CyclesPerMs(0));
    gpu_test::LaunchSum(stream, static_cast<const int64_t*>((*first)->device_input_ids().data),
                        kBatch * kSeq, sum);
  }  // released while the kernels are queued: "consumed" is recorded on `stream`
  for (int i = 0; i < 3; ++i) {  // the next copies reuse the first batch's buffer
    auto next = gpu->Next();
    ASSERT_TRUE(next.ok() && next->has_value());
    ASSERT_TRUE((*next)->Synchronize().ok());
  }
  unsigned long long got = 0;
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(&got, sum, sizeof(got), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(got, want) << "the buffer was overwritten before the consumer's kernels read it";
  cudaFree(sum);
  cudaStreamDestroy(stream);
}

TEST(GpuLoaderTest, SyntheticBatchLivesOnTheDevice) {
  REQUIRE_DEVICE();
  LoaderOptions o = Options(0);
  auto r = Loader::OpenSynthetic(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto a = (*r)->Next();
  auto b = (*r)->Next();
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*a)->on_device());
  EXPECT_EQ((*a)->device_input_ids().data, (*b)->device_input_ids().data) << "one fixed batch";
  EXPECT_EQ(DeviceBytes((*a)->device_input_ids(), 8), HostBytes((*a)->input_ids(), 8));
}

}  // namespace
}  // namespace stoker::loader
