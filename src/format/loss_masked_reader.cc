#include "format/loss_masked_reader.h"

#include <vector>

#include "format/loss_mask.h"

namespace stoker {

LossMaskedReader::LossMaskedReader(std::shared_ptr<const DocumentReader> data,
                                   std::shared_ptr<const StokerDataset> spans)
    : data_(std::move(data)), spans_(std::move(spans)) {}

Status LossMaskedReader::ReadLossMask(uint64_t doc, uint64_t offset, uint64_t count,
                                      uint8_t* out) const {
  std::optional<uint64_t> length = data_->FindDocumentLength(doc);
  if (!length) return OutOfRange(path() + ": no document " + std::to_string(doc));
  if (offset + count > *length) {
    return OutOfRange(path() + ": loss mask [" + std::to_string(offset) + ", " +
                      std::to_string(offset + count) + ") is outside document " +
                      std::to_string(doc));
  }
  // A loader worker reads many pieces: the spans' buffer is kept per thread.
  thread_local std::vector<int32_t> scratch;
  return stoker::ReadLossMask(*spans_, doc, *length, offset, count, out, &scratch);
}

StorageStats LossMaskedReader::storage_stats() const {
  StorageStats a = data_->storage_stats();
  a += spans_->storage_stats();
  return a;
}

}  // namespace stoker
