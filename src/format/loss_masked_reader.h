// LossMaskedReader: a dataset's tokens together with its loss mask (docs/chat.md), as one
// DocumentReader: the tokens come from the data, the mask from the spans beside them.
// Thread-safe: every method is const (per-thread scratch for the spans).
#pragma once

#include <memory>
#include <string>

#include "format/stoker_dataset.h"
#include "stoker/document_reader.h"

namespace stoker {

class LossMaskedReader final : public DocumentReader {
 public:
  // `spans` is the loss-mask dataset of `data` (OpenLossMask), document for document.
  LossMaskedReader(std::shared_ptr<const DocumentReader> data,
                   std::shared_ptr<const StokerDataset> spans);

  const std::string& path() const override { return data_->path(); }
  std::optional<uint64_t> FindDocumentLength(uint64_t doc) const override {
    return data_->FindDocumentLength(doc);
  }
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const override {
    return data_->Read(doc, offset, count, out);
  }
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const override {
    return data_->Read(doc, offset, count, out);
  }
  std::optional<uint64_t> TokensBetween(uint64_t doc, uint64_t end, uint64_t next_doc,
                                        uint64_t next_offset) const override {
    return data_->TokensBetween(doc, end, next_doc, next_offset);
  }
  Status ReadSpan(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const override {
    return data_->ReadSpan(doc, offset, count, out);
  }
  void PrefetchIndex(uint64_t doc) const override { data_->PrefetchIndex(doc); }
  void PrefetchTokens(uint64_t doc, uint64_t offset) const override {
    data_->PrefetchTokens(doc, offset);
  }
  bool has_loss_mask() const override { return true; }
  Status ReadLossMask(uint64_t doc, uint64_t offset, uint64_t count, uint8_t* out) const override;
  StorageStats storage_stats() const override;

 private:
  std::shared_ptr<const DocumentReader> data_;
  std::shared_ptr<const StokerDataset> spans_;
};

}  // namespace stoker
