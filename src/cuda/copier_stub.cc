// Build without CUDA: the copier interface of src/cuda/copier.h reporting "no device".
#ifndef STOKER_HAVE_CUDA

#include "cuda/copier.h"

namespace stoker::cuda {

int DeviceCount() { return 0; }

Result<void*> AllocPinned(size_t size_bytes) {
  return Unavailable("stoker was built without CUDA: no pinned memory");
}

void FreePinned(void* ptr) {}

Result<std::unique_ptr<DeviceCopier>> DeviceCopier::Open(int device, size_t buffer_bytes,
                                                         int num_buffers) {
  return Unavailable("stoker was built without CUDA: no device copier");
}

}  // namespace stoker::cuda

#endif  // STOKER_HAVE_CUDA
