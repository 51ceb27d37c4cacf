// CUDA implementation of src/cuda/copier.h: a non-blocking side stream, per-buffer events.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "cuda/copier.h"

namespace stoker::cuda {
namespace {

Status CudaStatus(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return Status::OK();
  return Unavailable(std::string("CUDA ") + what + ": " + cudaGetErrorString(err));
}

class CudaCopier final : public DeviceCopier {
 public:
  CudaCopier(int device, int num_buffers)
      : device_(device),
        buffers_(num_buffers, nullptr),
        start_(num_buffers, nullptr),
        copied_(num_buffers, nullptr),
        consumed_(num_buffers, nullptr),
        consumed_pending_(num_buffers, 0),
        copy_pending_(num_buffers, 0) {}

  ~CudaCopier() override {
    cudaSetDevice(device_);
    if (stream_ != nullptr) cudaStreamSynchronize(stream_);
    for (size_t i = 0; i < buffers_.size(); ++i) {
      if (buffers_[i] != nullptr) cudaFree(buffers_[i]);
      if (start_[i] != nullptr) cudaEventDestroy(start_[i]);
      if (copied_[i] != nullptr) cudaEventDestroy(copied_[i]);
      if (consumed_[i] != nullptr) cudaEventDestroy(consumed_[i]);
    }
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  Status Init(size_t buffer_bytes) {
    STOKER_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device_), "cudaSetDevice"));
    STOKER_RETURN_IF_ERROR(
        CudaStatus(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate"));
    for (size_t i = 0; i < buffers_.size(); ++i) {
      STOKER_RETURN_IF_ERROR(CudaStatus(cudaMalloc(&buffers_[i], buffer_bytes), "cudaMalloc"));
      STOKER_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&start_[i]), "cudaEventCreate"));
      STOKER_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&copied_[i]), "cudaEventCreate"));
      STOKER_RETURN_IF_ERROR(CudaStatus(
          cudaEventCreateWithFlags(&consumed_[i], cudaEventDisableTiming), "cudaEventCreate"));
    }
    return Status::OK();
  }

  int num_buffers() const override { return static_cast<int>(buffers_.size()); }
  void* device_ptr(int buffer) const override { return buffers_[buffer]; }

  Status CopyAsync(int buffer, const void* host, size_t size_bytes) override {
    STOKER_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device_), "cudaSetDevice"));
    if (consumed_pending_[buffer]) {
      // The consumer's kernels may still read this buffer: order the copy after them on the GPU.
      STOKER_RETURN_IF_ERROR(
          CudaStatus(cudaStreamWaitEvent(stream_, consumed_[buffer], 0), "cudaStreamWaitEvent"));
      consumed_pending_[buffer] = 0;
    }
    STOKER_RETURN_IF_ERROR(CudaStatus(cudaEventRecord(start_[buffer], stream_), "cudaEventRecord"));
    STOKER_RETURN_IF_ERROR(CudaStatus(
        cudaMemcpyAsync(buffers_[buffer], host, size_bytes, cudaMemcpyHostToDevice, stream_),
        "cudaMemcpyAsync"));
    STOKER_RETURN_IF_ERROR(
        CudaStatus(cudaEventRecord(copied_[buffer], stream_), "cudaEventRecord"));
    copy_pending_[buffer] = 1;
    return Status::OK();
  }

  Status WaitCopied(int buffer) override {
    if (!copy_pending_[buffer]) return Status::OK();
    return CudaStatus(cudaEventSynchronize(copied_[buffer]), "cudaEventSynchronize");
  }

  bool Copied(int buffer) override {
    return !copy_pending_[buffer] || cudaEventQuery(copied_[buffer]) == cudaSuccess;
  }

  Status StreamWaitCopied(int buffer, void* stream) override {
    STOKER_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device_), "cudaSetDevice"));
    return CudaStatus(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), copied_[buffer], 0),
                      "cudaStreamWaitEvent");
  }

  Status RecordConsumed(int buffer, void* stream) override {
    STOKER_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device_), "cudaSetDevice"));
    STOKER_RETURN_IF_ERROR(CudaStatus(
        cudaEventRecord(consumed_[buffer], static_cast<cudaStream_t>(stream)), "cudaEventRecord"));
    consumed_pending_[buffer] = 1;
    return Status::OK();
  }

  float LastCopyMs(int buffer) override {
    if (!copy_pending_[buffer] || cudaEventQuery(copied_[buffer]) != cudaSuccess) return -1.0f;
    float ms = -1.0f;
    if (cudaEventElapsedTime(&ms, start_[buffer], copied_[buffer]) != cudaSuccess) return -1.0f;
    return ms;
  }

 private:
  const int device_;
  cudaStream_t stream_ = nullptr;
  std::vector<void*> buffers_;
  std::vector<cudaEvent_t> start_;
  std::vector<cudaEvent_t> copied_;
  std::vector<cudaEvent_t> consumed_;
  // char, not bool: different threads touch different buffers' flags, and vector<bool> packs bits.
  std::vector<char> consumed_pending_;
  std::vector<char> copy_pending_;
};

}  // namespace

int DeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver/device" error so later calls start clean
    return 0;
  }
  return count;
}

Result<void*> AllocPinned(size_t size_bytes) {
  if (DeviceCount() == 0) return Unavailable("no CUDA device for pinned memory");
  void* ptr = nullptr;
  cudaError_t err = cudaHostAlloc(&ptr, size_bytes, cudaHostAllocPortable);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return Unavailable(std::string("cudaHostAlloc: ") + cudaGetErrorString(err));
  }
  return ptr;
}

void FreePinned(void* ptr) {
  if (ptr != nullptr) cudaFreeHost(ptr);
}

Result<std::unique_ptr<DeviceCopier>> DeviceCopier::Open(int device, size_t buffer_bytes,
                                                         int num_buffers) {
  int count = DeviceCount();
  if (device < 0 || device >= count) {
    return Unavailable("CUDA device " + std::to_string(device) + " not present (" +
                       std::to_string(count) + " devices)");
  }
  if (num_buffers < 1) return InvalidArgument("copier needs at least one device buffer");
  auto copier = std::make_unique<CudaCopier>(device, num_buffers);
  STOKER_RETURN_IF_ERROR(copier->Init(buffer_bytes));
  return std::unique_ptr<DeviceCopier>(std::move(copier));
}

}  // namespace stoker::cuda
