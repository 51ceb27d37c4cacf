// BatchOwner: what a LoaderBatch calls back into — the pipeline engine or the synthetic source.
// Implementations are thread-safe: a batch may be released from any thread.
#pragma once

#include "stoker/status.h"

namespace stoker::loader {

class BatchOwner {
 public:
  virtual ~BatchOwner() = default;
  // Gives back a delivered batch's ring slot and device buffer (-1 = none). `stream` is the
  // consumer's cudaStream_t when `stream_set`.
  virtual void Release(int slot, int device_buffer, void* stream, bool stream_set) = 0;
  virtual Status WaitCopied(int device_buffer) = 0;
  virtual Status StreamWaitCopied(int device_buffer, void* stream) = 0;
};

}  // namespace stoker::loader
