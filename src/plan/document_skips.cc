// Quarantined documents: parsing their ids, resolving them, filtering rows (document_skips.h).
#include "plan/document_skips.h"

#include <algorithm>

namespace stoker {

Result<DocumentQuery> ParseDocumentQuery(const std::string& text) {
  const size_t last = text.rfind(':');
  const size_t mid =
      last == std::string::npos || last == 0 ? std::string::npos : text.rfind(':', last - 1);
  const std::string record = last == std::string::npos ? "" : text.substr(last + 1);
  if (mid == std::string::npos || mid == 0 || record.empty() ||
      record.find_first_not_of("0123456789") != std::string::npos || record.size() > 19) {
    return InvalidArgument("document '" + text +
                           "': expected DATASET:SHARD:RECORD (the record's index in its shard, "
                           "as `stoker trace` prints it)");
  }
  return DocumentQuery{text.substr(0, mid), text.substr(mid + 1, last - mid - 1),
                       std::stoull(record)};
}

bool SameDocumentName(const std::string& given, const std::string& full) {
  if (given == full) return true;
  if (full.size() <= given.size()) return false;
  return full.compare(full.size() - given.size(), given.size(), given) == 0 &&
         full[full.size() - given.size() - 1] == '/';
}

std::optional<uint64_t> DocumentIndexOf(const DocumentQuery& q, const std::string& name,
                                        const ProvenanceDataset& d) {
  if (!SameDocumentName(q.dataset, name) && !SameDocumentName(q.dataset, d.path)) {
    return std::nullopt;
  }
  const uint64_t shards = d.shard_paths.size();
  std::optional<uint64_t> shard;
  if (!q.shard.empty() && q.shard.find_first_not_of("0123456789") == std::string::npos &&
      q.shard.size() < 19) {
    shard = std::stoull(q.shard);
  }
  for (uint64_t s = 0; !shard && s < shards; ++s) {
    if (SameDocumentName(q.shard, d.shard_paths[s])) shard = s;
  }
  if (!shard || *shard >= shards || *shard + 1 >= d.shard_first_document.size()) {
    return std::nullopt;
  }
  const uint64_t first = d.shard_first_document[*shard];
  if (q.record >= d.shard_first_document[*shard + 1] - first) return std::nullopt;
  return first + q.record;
}

Result<DocumentSkips> DocumentSkips::Resolve(const std::vector<std::string>& ids,
                                             const std::vector<std::string>& names,
                                             const std::vector<ProvenanceDataset>& datasets) {
  DocumentSkips out;
  for (const std::string& id : ids) {
    STOKER_ASSIGN_OR_RETURN(DocumentQuery q, ParseDocumentQuery(id));
    bool found = false;
    for (size_t k = 0; k < datasets.size(); ++k) {
      std::optional<uint64_t> doc =
          DocumentIndexOf(q, k < names.size() ? names[k] : datasets[k].path, datasets[k]);
      if (!doc) continue;
      out.keys_.insert((uint64_t{k} << 48) ^ *doc);
      found = true;
    }
    if (!found) {
      std::string listed;
      for (size_t k = 0; k < datasets.size(); ++k) {
        listed += (listed.empty() ? "" : ", ") + (k < names.size() ? names[k] : datasets[k].path) +
                  " (" + std::to_string(datasets[k].shard_paths.size()) + " shards)";
      }
      return InvalidArgument("skip document '" + id + "': no such document in the datasets (" +
                             listed + "); give DATASET:SHARD:RECORD as `stoker trace` prints it");
    }
    if (std::find(out.ids_.begin(), out.ids_.end(), id) == out.ids_.end()) out.ids_.push_back(id);
  }
  return out;
}

Result<std::shared_ptr<const DocumentSkips>> DocumentSkips::ForState(
    const std::vector<std::string>& ids, const std::vector<std::string>& names,
    const std::vector<std::shared_ptr<const TokenSource>>& sources,
    const std::vector<std::string>& paths) {
  if (ids.empty()) return std::shared_ptr<const DocumentSkips>();
  std::vector<ProvenanceDataset> shards;
  std::vector<std::string> named = names;
  for (size_t k = 0; k < sources.size(); ++k) {
    const std::string label = k < paths.size() ? paths[k] : "";
    shards.push_back(ProvenanceDataset::FromSource(*sources[k], label));
    if (named.size() <= k) named.push_back(label.empty() ? sources[k]->path() : label);
  }
  STOKER_ASSIGN_OR_RETURN(DocumentSkips resolved, Resolve(ids, named, shards));
  return std::make_shared<const DocumentSkips>(std::move(resolved));
}

void DocumentSkips::Filter(Batch* batch) const {
  if (keys_.empty()) return;
  for (Row& row : batch->rows) {
    std::erase_if(row.pieces,
                  [this](const RowPiece& p) { return Contains(p.dataset, p.document); });
  }
}

Status SameDocumentSkips(const PlanState& state, const DocumentSkips* skips) {
  const std::vector<std::string> none;
  if (state.skip_documents == (skips != nullptr ? skips->ids() : none)) return Status::OK();
  return FailedPrecondition("the state quarantines " + std::to_string(state.skip_documents.size()) +
                            " document(s) and this loader " +
                            std::to_string(skips != nullptr ? skips->ids().size() : 0) +
                            " others: open a new loader at the state "
                            "(stoker.Loader.load_state_dict does)");
}

}  // namespace stoker
