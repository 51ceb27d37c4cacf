// The plan's I/O companion: one dataset opened and planned as the loader plans it
// (PlannedDataset), which `Loader::Open`, `stoker plan`, `stoker explain`, `stoker.plan` and the
// stream's chat lengths share. Its lengths are what the plan sees under the LongDocuments policy
// (docs/chat.md, "Long conversations": chat data, a reader with a loss mask, drops conversations
// longer than seq_len by default, text splits them); and the trained-token share of an epoch.
// The plan itself (plan/) opens no file: this is where its datasets are opened.
// Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stoker/document_reader.h"
#include "stoker/plan.h"
#include "stoker/status.h"
#include "stoker/token_source.h"

namespace stoker {

struct RemoteDatasetOptions;

// `source` read together with its loss mask (a LossMaskedReader) when it has one, else `source`
// itself. Remote masks are read as `remote` says.
Result<std::shared_ptr<const DocumentReader>> WithLossMask(
    std::shared_ptr<const TokenSource> source, const RemoteDatasetOptions& remote);

// Chat data is never cut at row ends unless asked (docs/chat.md, "Long conversations"):
// kInvalidArgument for pack concat on a dataset with a loss mask, unless `policy` is kSplit.
Status CheckChatPacking(bool has_loss_mask, PackMode pack, LongDocuments policy);

// kAuto resolved for a dataset with or without a loss mask.
LongDocuments ResolveLongDocuments(LongDocuments policy, bool has_loss_mask);

// `lengths` of `reader`'s documents under `policy` (resolved here). Under kTruncate a chat
// document whose head has no trained target (no trained token among tokens 1..seq_len, the
// targets of its seq_len positions) is dropped too, and counted as untrained. *counts gets what
// changed.
Result<DatasetLengths> PlannedLengths(DatasetLengths lengths, const DocumentReader& reader,
                                      LongDocuments policy, uint64_t seq_len,
                                      LongDocumentCounts* counts);

// The trained targets of an epoch over `planned` (PlannedLengths of `reader`'s documents): for a
// document planned with n > 0 tokens, its trained tokens among [1, min(length, n + 1)), the
// targets of its labels; every one of them for a reader without a loss mask.
Result<uint64_t> CountTrainedTargets(const DatasetLengths& planned, const DocumentReader& reader);

// One dataset as `stoker plan` and `stoker.plan` plan it, as the loader would: its lengths under
// the LongDocuments policy (chat packing checked), and the source read with its loss mask.
struct PlannedDataset {
  PlanDataset plan;
  std::shared_ptr<const TokenSource> source;
  std::shared_ptr<const DocumentReader> reader;  // with its loss mask, for chat data
  LongDocumentCounts long_documents;
};
Result<PlannedDataset> OpenPlannedDataset(const std::string& path, double weight, uint64_t seq_len,
                                          PackMode pack, LongDocuments policy);

// What OpenPlannedDataset and Loader::Open do with an open `source`: read it with its loss mask
// (remote masks as `remote` says), check chat packing, and plan its lengths (named `name` when
// the source names none) under `policy`. Errors but those of Lengths() say `context`.
Result<PlannedDataset> PreparePlannedDataset(std::shared_ptr<const TokenSource> source,
                                             const RemoteDatasetOptions& remote,
                                             const std::string& name, double weight,
                                             uint64_t seq_len, PackMode pack, LongDocuments policy,
                                             const std::string& context);

// The trained-token share of an epoch's row positions: each dataset's trained targets per planned
// token, weighted by the real tokens the epoch takes from it (its epochs in this plan epoch times
// its planned tokens), times the real-token share. Exact for one dataset.
struct TrainedShare {
  double share = 0;
  std::vector<uint64_t> targets;  // per dataset: CountTrainedTargets
  std::vector<uint64_t> tokens;   // per dataset: planned tokens
};
Result<TrainedShare> ComputeTrainedShare(const Plan& plan,
                                         const std::vector<PlannedDataset>& datasets,
                                         double real_token_share, uint64_t epoch);

}  // namespace stoker
