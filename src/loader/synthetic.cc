#include "loader/synthetic.h"

#include <random>

#include "loader/memory_token_source.h"

namespace stoker::loader {

Result<std::shared_ptr<SyntheticBatch>> SyntheticBatch::Open(const AssemblyOptions& options,
                                                             uint64_t seed, bool pin_memory,
                                                             int device) {
  auto batch = std::make_shared<SyntheticBatch>();
  batch->layout_ = BatchLayout::For(options);
  // Documents of 64..seq_len tokens packed end to end, so the batch has realistic boundaries.
  std::mt19937_64 rng(seed);
  const uint64_t S = options.seq_len;
  std::vector<std::vector<int64_t>> docs;
  std::vector<Row> rows(options.batch_size);
  for (Row& row : rows) {
    uint64_t used = 0;
    while (used < S) {
      uint64_t len = std::min<uint64_t>(S - used, 64 + rng() % std::max<uint64_t>(S, 1));
      std::vector<int64_t> doc(len);
      for (int64_t& t : doc) t = static_cast<int64_t>(rng() % 50000) + 1;
      row.pieces.push_back({0, docs.size(), 0, len});
      docs.push_back(std::move(doc));
      used += len;
    }
  }
  MemoryTokenSource source("synthetic", std::move(docs));
  STOKER_ASSIGN_OR_RETURN(batch->ring_, SlotRing::Open(1, batch->layout_.total_bytes, pin_memory));
  STOKER_RETURN_IF_ERROR(AssembleBatch(options, batch->layout_, {&source}, rows,
                                       batch->ring_->slot(0), &batch->assembly_));
  batch->planner_ = std::make_shared<FixedBatchPlanner>(rows);
  if (device >= 0 && cuda::DeviceCount() > device) {
    STOKER_ASSIGN_OR_RETURN(batch->copier_,
                            cuda::DeviceCopier::Open(device, batch->layout_.total_bytes, 1));
    STOKER_RETURN_IF_ERROR(
        batch->copier_->CopyAsync(0, batch->ring_->slot(0), batch->layout_.total_bytes));
    STOKER_RETURN_IF_ERROR(batch->copier_->WaitCopied(0));
    batch->device_ = device;
  }
  return batch;
}

Status SyntheticBatch::WaitCopied(int device_buffer) {
  return copier_ ? copier_->WaitCopied(0) : Status::OK();
}

Status SyntheticBatch::StreamWaitCopied(int device_buffer, void* stream) {
  return copier_ ? copier_->StreamWaitCopied(0, stream) : Status::OK();
}

}  // namespace stoker::loader
