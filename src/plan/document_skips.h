// Single documents quarantined on resume (`stoker resume-edit --skip-documents`, docs/plan.md,
// "Skipping steps on resume"): ids in the form `stoker trace` prints (DATASET:SHARD:RECORD),
// resolved against a plan's datasets, and their pieces taken out of the rows that hold them (the
// rest of each row, and every other row, stays as planned). Also the parser of `stoker trace
// --document`. DocumentSkips is immutable once made: thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "plan/plan_provenance.h"
#include "stoker/plan.h"
#include "stoker/status.h"
#include "stoker/token_source.h"

namespace stoker {

// DATASET:SHARD:RECORD, read from the right (a dataset name may hold ':'). SHARD is the shard's
// number or its path (or the path's last component); DATASET a name or path.
struct DocumentQuery {
  std::string dataset;
  std::string shard;
  uint64_t record = 0;
};

// kInvalidArgument (naming `text` and the form) when `text` is not DATASET:SHARD:RECORD.
Result<DocumentQuery> ParseDocumentQuery(const std::string& text);

// Whether `given` names `full`: equal, or its last path components ("web" names "/data/web").
bool SameDocumentName(const std::string& given, const std::string& full);

// The index in its dataset of the document `q` names, if `q` names dataset `d` (called `name`,
// or by d.path) and one of its records; nullopt otherwise.
std::optional<uint64_t> DocumentIndexOf(const DocumentQuery& q, const std::string& name,
                                        const ProvenanceDataset& d);

class DocumentSkips {
 public:
  // Resolves `ids` against a plan's datasets (`names[k]` and `datasets[k]` for plan dataset k).
  // kInvalidArgument: an id that is malformed or names no document of them (the message lists
  // the datasets and their shard counts).
  static Result<DocumentSkips> Resolve(const std::vector<std::string>& ids,
                                       const std::vector<std::string>& names,
                                       const std::vector<ProvenanceDataset>& datasets);

  // The documents a state quarantines (PlanState::skip_documents) resolved against a plan's
  // token sources: `sources[k]` labelled `paths[k]` (its own path where that is missing or
  // empty), named `names[k]` where given (a mixture's names), else by that label. Null for no
  // ids. Loader::Open and PlanBatchPlanner::RestorePosition (Loader::Restore) both resolve here.
  // Errors as Resolve's.
  static Result<std::shared_ptr<const DocumentSkips>> ForState(
      const std::vector<std::string>& ids, const std::vector<std::string>& names,
      const std::vector<std::shared_ptr<const TokenSource>>& sources,
      const std::vector<std::string>& paths);

  bool empty() const { return ids_.empty(); }
  // The ids as given (what a state carries forward).
  const std::vector<std::string>& ids() const { return ids_; }
  bool Contains(uint32_t dataset, uint64_t document) const {
    return keys_.count((uint64_t{dataset} << 48) ^ document) > 0;
  }
  // Removes the pieces of the quarantined documents from every row of `batch`.
  void Filter(Batch* batch) const;

 private:
  std::vector<std::string> ids_;
  std::unordered_set<uint64_t> keys_;  // dataset << 48 ^ document
};

// OK when `state` quarantines the documents `skips` does (null: none); otherwise
// kFailedPrecondition saying to open a new loader at the state (what a planner's
// RestorePosition answers: the quarantine is fixed when a loader opens).
Status SameDocumentSkips(const PlanState& state, const DocumentSkips* skips);

}  // namespace stoker
