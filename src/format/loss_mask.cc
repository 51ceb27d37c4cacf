#include "format/loss_mask.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "common/file_util.h"
#include "common/uri.h"
#include "format/stoker_dataset.h"

namespace stoker {

uint64_t MaskToSpans(std::span<const uint8_t> mask, std::vector<int32_t>* spans) {
  uint64_t trained = 0;
  size_t i = 0;
  while (i < mask.size()) {
    if (mask[i] == 0) {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < mask.size() && mask[i] != 0) ++i;
    spans->push_back(static_cast<int32_t>(start));
    spans->push_back(static_cast<int32_t>(i));
    trained += i - start;
  }
  return trained;
}

Status CheckSpans(std::span<const int32_t> spans, uint64_t length, const std::string& where) {
  if (spans.size() % 2 != 0) {
    return Corruption(where + ": the loss mask holds " + std::to_string(spans.size()) +
                      " offsets, not pairs");
  }
  int64_t previous_end = 0;
  for (size_t i = 0; i < spans.size(); i += 2) {
    const int64_t start = spans[i], end = spans[i + 1];
    if (start < previous_end || end <= start || static_cast<uint64_t>(end) > length) {
      return Corruption(where + ": loss-mask span " + std::to_string(i / 2) + " [" +
                        std::to_string(start) + ", " + std::to_string(end) +
                        ") is not an increasing, non-empty range within the document's " +
                        std::to_string(length) + " tokens");
    }
    previous_end = end;
  }
  return Status::OK();
}

void SpansToMask(std::span<const int32_t> spans, uint64_t offset, uint64_t count, uint8_t* out) {
  std::memset(out, 0, count);
  const uint64_t end = offset + count;
  for (size_t i = 0; i + 1 < spans.size(); i += 2) {
    const uint64_t a = std::max<uint64_t>(spans[i], offset);
    const uint64_t b = std::min<uint64_t>(spans[i + 1], end);
    if (a < b) std::memset(out + (a - offset), 1, b - a);
  }
}

Status ReadLossMask(const DocumentReader& spans, uint64_t doc, uint64_t length, uint64_t offset,
                    uint64_t count, uint8_t* out, std::vector<int32_t>* scratch) {
  std::optional<uint64_t> n = spans.FindDocumentLength(doc);
  if (!n) {
    return Corruption(spans.path() + ": the loss mask has no document " + std::to_string(doc));
  }
  scratch->resize(*n);
  if (*n > 0) STOKER_RETURN_IF_ERROR(spans.Read(doc, 0, *n, scratch->data()));
  STOKER_RETURN_IF_ERROR(
      CheckSpans(*scratch, length, spans.path() + " document " + std::to_string(doc)));
  SpansToMask(*scratch, offset, count, out);
  return Status::OK();
}

Result<std::unique_ptr<StokerDataset>> OpenLossMask(const TokenSource& data) {
  return OpenLossMask(data, RemoteDatasetOptions{});
}

Result<std::unique_ptr<StokerDataset>> OpenLossMask(const TokenSource& data,
                                                    const RemoteDatasetOptions& remote) {
  const auto* dataset = dynamic_cast<const StokerDataset*>(&data);
  if (dataset == nullptr || !dataset->manifest().loss_mask) return std::unique_ptr<StokerDataset>();
  const std::string& sub = dataset->manifest().loss_mask->dataset;
  Result<std::unique_ptr<StokerDataset>> mask =
      dataset->remote() ? StokerDataset::OpenRemote(JoinUri(dataset->path(), sub), remote)
                        : StokerDataset::Open(JoinPath(dataset->path(), sub));
  if (!mask.ok()) return mask.status().WithContext("the loss mask of " + dataset->path());
  if ((*mask)->num_documents() != dataset->num_documents()) {
    return Corruption("the loss mask of " + dataset->path() + " has " +
                      std::to_string((*mask)->num_documents()) + " documents, the data " +
                      std::to_string(dataset->num_documents()));
  }
  return mask;
}

}  // namespace stoker
