// The CUDA side of the loader: device discovery, pinned host memory and the host-to-device copier.
//
// This header carries no CUDA types, so the loader compiles the same with or without CUDA: with
// CUDA (STOKER_HAVE_CUDA), copier.cu implements it; without, copier_stub.cc reports "no device".
// At run time a machine without a GPU or driver behaves like a build without CUDA.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "stoker/status.h"

namespace stoker::cuda {

// Number of usable CUDA devices; 0 when CUDA is not compiled in, no driver, or no GPU.
int DeviceCount();

// Page-locked host memory (cudaHostAlloc) of `size_bytes`, usable by every device. Fails when no
// device is usable; the caller then falls back to ordinary memory.
Result<void*> AllocPinned(size_t size_bytes);
void FreePinned(void* ptr);

// Copies batches from pinned host slots into a fixed set of device buffers on its own stream.
// Each buffer has a "copied" event (recorded after its copy) and a "consumed" event (recorded by
// the consumer's stream when it releases the batch); a copy into a buffer first waits, on the
// copier stream, for the buffer's last "consumed" event, so the GPU never overwrites data that
// queued kernels still read, and no host thread blocks for it.
// Not thread-safe: one user at a time (the loader calls CopyAsync from its copier thread and the
// other methods under the same discipline documented in docs/loader.md).
class DeviceCopier {
 public:
  virtual ~DeviceCopier() = default;

  // Opens a copier on `device` with `num_buffers` device buffers of `buffer_bytes` each.
  static Result<std::unique_ptr<DeviceCopier>> Open(int device, size_t buffer_bytes,
                                                    int num_buffers);

  virtual int num_buffers() const = 0;
  // Device address of buffer `buffer`; valid until the copier is destroyed.
  virtual void* device_ptr(int buffer) const = 0;

  // Enqueues a copy of `size_bytes` from `host` (pinned) into `buffer` on the copier stream and
  // records the buffer's "copied" event. Returns without waiting for the copy.
  virtual Status CopyAsync(int buffer, const void* host, size_t size_bytes) = 0;
  // Blocks the calling thread until the last copy into `buffer` has finished.
  virtual Status WaitCopied(int buffer) = 0;
  // True when the last copy into `buffer` has finished (never blocks).
  virtual bool Copied(int buffer) = 0;
  // Makes `stream` (a cudaStream_t; null = the legacy default stream) wait for the copy into
  // `buffer`, without blocking the host.
  virtual Status StreamWaitCopied(int buffer, void* stream) = 0;
  // Records on `stream` that the consumer is done with `buffer` once the work queued so far ends.
  virtual Status RecordConsumed(int buffer, void* stream) = 0;
  // Milliseconds the last copy into `buffer` took on the GPU (events' elapsed time); -1 if unknown.
  virtual float LastCopyMs(int buffer) = 0;
};

}  // namespace stoker::cuda
