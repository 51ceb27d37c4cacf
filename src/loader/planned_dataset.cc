#include "loader/planned_dataset.h"

#include <algorithm>
#include <vector>

#include "format/loss_mask.h"
#include "format/loss_masked_reader.h"
#include "format/open_token_source.h"
#include "format/stoker_dataset.h"

namespace stoker {

Result<std::shared_ptr<const DocumentReader>> WithLossMask(
    std::shared_ptr<const TokenSource> source, const RemoteDatasetOptions& remote) {
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<StokerDataset> mask, OpenLossMask(*source, remote));
  if (mask == nullptr) return std::shared_ptr<const DocumentReader>(std::move(source));
  return std::shared_ptr<const DocumentReader>(
      std::make_shared<LossMaskedReader>(std::move(source), std::move(mask)));
}

Result<uint64_t> CountTrainedTargets(const DatasetLengths& planned, const DocumentReader& reader) {
  uint64_t trained = 0;
  std::vector<uint8_t> mask;
  for (uint64_t doc = 0; doc < planned.num_documents(); ++doc) {
    const uint64_t n = planned.length(doc);
    if (n == 0) continue;
    const uint64_t length = reader.FindDocumentLength(doc).value_or(n);
    const uint64_t end = std::min(length, n + 1);  // targets [1, end)
    if (end <= 1) continue;
    if (!reader.has_loss_mask()) {
      trained += end - 1;
      continue;
    }
    mask.resize(end - 1);
    STOKER_RETURN_IF_ERROR(reader.ReadLossMask(doc, 1, end - 1, mask.data())
                               .WithContext("document " + std::to_string(doc)));
    trained += std::count(mask.begin(), mask.end(), uint8_t{1});
  }
  STOKER_RETURN_IF_ERROR(planned.status());
  return trained;
}

Status CheckChatPacking(bool has_loss_mask, PackMode pack, LongDocuments policy) {
  if (!has_loss_mask || pack != PackMode::kConcat || policy == LongDocuments::kSplit) {
    return Status::OK();
  }
  return InvalidArgument(
      "chat data with pack 'concat' would cut conversations at row ends: use pack 'bestfit' (or "
      "'pad'), or long_documents 'split' (--long-documents split) to cut them anyway");
}

LongDocuments ResolveLongDocuments(LongDocuments policy, bool has_loss_mask) {
  if (policy != LongDocuments::kAuto) return policy;
  return has_loss_mask ? LongDocuments::kDrop : LongDocuments::kSplit;
}

Result<DatasetLengths> PlannedLengths(DatasetLengths lengths, const DocumentReader& reader,
                                      LongDocuments policy, uint64_t seq_len,
                                      LongDocumentCounts* counts) {
  LongDocumentCounts c;
  policy = ResolveLongDocuments(policy, reader.has_loss_mask());
  if (policy == LongDocuments::kSplit) {
    if (counts != nullptr) *counts = c;
    return lengths;
  }
  STOKER_ASSIGN_OR_RETURN(DatasetLengths out, LimitLongDocuments(lengths, policy, seq_len, &c));
  if (policy == LongDocuments::kTruncate && reader.has_loss_mask() && c.truncated > 0) {
    // The head's targets are tokens 1..seq_len (the last one read past the cut).
    std::vector<uint8_t> mask(seq_len);
    for (uint64_t doc = 0; doc < out.num_documents(); ++doc) {
      if (out.document_lengths[doc] != seq_len || lengths.length(doc) <= seq_len) continue;
      STOKER_RETURN_IF_ERROR(reader.ReadLossMask(doc, 1, seq_len, mask.data())
                                 .WithContext("document " + std::to_string(doc)));
      if (std::none_of(mask.begin(), mask.end(), [](uint8_t m) { return m != 0; })) {
        out.document_lengths[doc] = 0;
        ++c.untrained;
      }
    }
  }
  if (counts != nullptr) *counts = c;
  return out;
}

Result<PlannedDataset> OpenPlannedDataset(const std::string& path, double weight, uint64_t seq_len,
                                          PackMode pack, LongDocuments policy) {
  STOKER_ASSIGN_OR_RETURN(std::shared_ptr<const TokenSource> source, OpenTokenSource(path));
  return PreparePlannedDataset(std::move(source), RemoteDatasetOptions{}, path, weight, seq_len,
                               pack, policy, path);
}

Result<PlannedDataset> PreparePlannedDataset(std::shared_ptr<const TokenSource> source,
                                             const RemoteDatasetOptions& remote,
                                             const std::string& name, double weight,
                                             uint64_t seq_len, PackMode pack, LongDocuments policy,
                                             const std::string& context) {
  PlannedDataset d;
  d.source = std::move(source);
  // Chat data: the tokens read together with their loss mask (docs/chat.md, "Batches").
  Result<std::shared_ptr<const DocumentReader>> reader = WithLossMask(d.source, remote);
  if (!reader.ok()) return reader.status().WithContext(context);
  d.reader = std::move(reader).value();
  STOKER_RETURN_IF_ERROR(
      CheckChatPacking(d.reader->has_loss_mask(), pack, policy).WithContext(context));
  STOKER_ASSIGN_OR_RETURN(DatasetLengths lengths, d.source->Lengths());
  if (lengths.name.empty()) lengths.name = name;
  Result<DatasetLengths> planned =
      PlannedLengths(std::move(lengths), *d.reader, policy, seq_len, &d.long_documents);
  if (!planned.ok()) return planned.status().WithContext(context);
  lengths = std::move(planned).value();
  d.plan = PlanDataset{std::make_shared<const DatasetLengths>(std::move(lengths)), weight};
  return d;
}

Result<TrainedShare> ComputeTrainedShare(const Plan& plan,
                                         const std::vector<PlannedDataset>& datasets,
                                         double real_token_share, uint64_t epoch) {
  const std::vector<double> at_end = plan.DatasetEpochs({epoch + 1, 0});
  const std::vector<double> at_start = plan.DatasetEpochs({epoch, 0});
  TrainedShare out;
  double trained = 0, planned = 0;
  for (size_t k = 0; k < datasets.size(); ++k) {
    const DatasetLengths& lengths = *datasets[k].plan.lengths;
    STOKER_ASSIGN_OR_RETURN(uint64_t targets, CountTrainedTargets(lengths, *datasets[k].reader));
    uint64_t tokens = 0;
    for (uint64_t d = 0; d < lengths.num_documents(); ++d) tokens += lengths.length(d);
    out.targets.push_back(targets);
    out.tokens.push_back(tokens);
    const double epochs = at_end[k] - at_start[k];
    trained += epochs * targets;
    planned += epochs * tokens;
  }
  out.share = planned > 0 ? real_token_share * trained / planned : 0;
  return out;
}

}  // namespace stoker
