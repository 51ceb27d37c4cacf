// Checkpoints of mixtures and their edits (docs/plan.md, "Edits on resume"): each dataset's cursor
// in a state, and Plan::ContinueFrom, which maps a state's cursors onto this plan's datasets.
#include <algorithm>
#include <string>

#include "common/hash.h"
#include "format/length_hash.h"
#include "plan/fingerprint.h"
#include "plan/options_text.h"
#include "plan/plan_impl.h"
#include "plan/plan_options_table.h"

namespace stoker {
namespace plan {

std::string PrefixId(const DatasetLengths& lengths, uint64_t documents, uint64_t shards) {
  uint64_t tokens = 0, hash = 0;
  if (documents == lengths.num_documents() && lengths.totals && lengths.totals->length_hash) {
    tokens = lengths.totals->tokens;  // the length index knows both: no pass over the lengths
    hash = *lengths.totals->length_hash;
  } else {
    FingerprintHasher lengths_hash;  // as HashLengths and the length index hash them
    for (uint64_t d = 0; d < documents; ++d) {
      const uint64_t l = lengths.length(d);
      lengths_hash.Add(l);
      tokens += l;
    }
    hash = lengths_hash.value();
  }
  FingerprintHasher h;
  h.Add(documents);
  h.Add(tokens);
  h.Add(hash);
  h.Add(shards);
  const std::vector<uint64_t>& first = lengths.shard_first_document;
  for (uint64_t s = 0; s <= shards && s < first.size(); ++s) h.Add(first[s]);
  return Xxh3Hex(h.value());
}

std::string StreamOptionsHash(const PlanOptions& o) {
  FingerprintHasher h;
  AddStreamOptions(o, &h);
  return Xxh3Hex(h.value());
}

std::string StreamOptionsText(const PlanOptions& o) { return OptionsText(PlanOptionTable(), o); }

namespace {

uint64_t ShardCount(const DatasetLengths& l) {
  return l.shard_first_document.empty() ? 1 : l.shard_first_document.size() - 1;
}

// The cursors of `from` (and dormant ones) mapped onto `datasets`: by name (`names`: the mixture's
// names, or absolute paths), then by the path as spelled (older checkpoints), then by identity; a
// dataset grown by appended shards keeps its cursor; a new one starts at 0 with a fresh key.
struct Mapping {
  MixtureOrigin origin;  // row left to the caller
  std::string summary;
};

Result<Mapping> MapCursors(const std::vector<DatasetCursor>& from,
                           const std::vector<DatasetCursor>& dormant,
                           const std::vector<PlanDataset>& datasets,
                           const std::vector<std::string>& names,
                           const std::vector<std::string>& ids) {
  std::vector<DatasetCursor> pool = from;
  pool.insert(pool.end(), dormant.begin(), dormant.end());
  std::vector<bool> used(pool.size(), false);
  uint64_t next_key = 0;
  for (const DatasetCursor& c : pool) next_key = std::max(next_key, c.key + 1);
  Mapping m;
  for (size_t k = 0; k < datasets.size(); ++k) {
    const DatasetLengths& l = *datasets[k].lengths;
    const std::string& name = names[k];
    const uint64_t docs = l.num_documents();
    size_t match = pool.size();
    for (size_t i = 0; i < pool.size() && match == pool.size(); ++i) {
      if (!used[i] && pool[i].name == name) match = i;
    }
    // A checkpoint written before names were recorded has the path as it was spelled.
    for (size_t i = 0; i < pool.size() && match == pool.size(); ++i) {
      if (!used[i] && pool[i].name == l.name) match = i;
    }
    for (size_t i = 0; i < pool.size() && match == pool.size(); ++i) {
      if (!used[i] && pool[i].id == ids[k]) match = i;
    }
    if (match == pool.size()) {
      m.origin.datasets.push_back({name, ids[k], docs, ShardCount(l), next_key++, 0, 0});
      m.summary += "dataset '" + name + "': added (starts its epoch 0)\n";
      continue;
    }
    used[match] = true;
    DatasetCursor c = pool[match];
    const bool dormant_before = match >= from.size();
    if (c.id != ids[k]) {
      const bool grown = docs > c.documents && c.shards <= ShardCount(l) &&
                         l.shard_first_document.size() > c.shards &&
                         l.shard_first_document[c.shards] == c.documents &&
                         PrefixId(l, c.documents, c.shards) == c.id;
      if (!grown) {
        return FailedPrecondition(
            "dataset '" + name + "' changed since the checkpoint (" + std::to_string(c.documents) +
            " documents in " + std::to_string(c.shards) + " shards then, " + std::to_string(docs) +
            " in " + std::to_string(ShardCount(l)) + " now, and its first " +
            std::to_string(c.shards) +
            " shards differ): what it had consumed cannot be found again; a dataset may only grow "
            "by appended shards");
      }
      m.summary += "dataset '" + name + "': grown from " + std::to_string(c.documents) + " to " +
                   std::to_string(docs) + " documents; the new ones join from its epoch " +
                   std::to_string(c.epoch + 1) + "\n";
    } else {
      m.summary += "dataset '" + name + "': continues its epoch " + std::to_string(c.epoch) +
                   " at row " + std::to_string(c.row) + (dormant_before ? " (added back)" : "") +
                   "\n";
    }
    c.name = name;  // a renamed dataset takes its new name; id and documents stay as they were
    m.origin.datasets.push_back(c);
  }
  for (size_t i = 0; i < pool.size(); ++i) {
    if (used[i]) continue;
    m.origin.dormant.push_back(pool[i]);
    if (i < from.size()) {
      m.summary += "dataset '" + pool[i].name + "': removed (its place is kept)\n";
    }
  }
  return m;
}

}  // namespace
}  // namespace plan

const std::vector<std::string>& Plan::Impl::DatasetIds() const {
  std::call_once(ids_once, [this] {
    for (const PlanDataset& d : datasets) {
      ids.push_back(plan::PrefixId(*d.lengths, d.lengths->num_documents(),
                                   d.lengths->shard_first_document.size() - 1));
    }
  });
  return ids;
}

void Plan::Impl::FillProgress(const PlanPosition& pos, PlanState* s) const {
  s->global_row = GlobalRow(pos);
  s->stream_options = plan::StreamOptionsHash(options);
  const std::vector<uint64_t> counts = mixture->CountsBefore(s->global_row);
  const std::vector<std::string>& id = DatasetIds();
  for (uint32_t k = 0; k < datasets.size(); ++k) {
    const DatasetLengths& l = *datasets[k].lengths;
    auto [epoch, row] = Locate(k, counts[k]);
    DatasetCursor c{
        DatasetName(k), id[k], l.num_documents(), l.shard_first_document.size() - 1, keys[k],
        epoch,          row};
    if (before_growth[k] && epoch <= growth_epoch[k]) {
      // Still in an epoch of the dataset as it was: that is what a later resume must continue.
      c = origin->datasets[k];
      c.epoch = epoch;
      c.row = row;
    }
    s->datasets.push_back(std::move(c));
  }
  s->origin = origin;
}

Result<Plan::Continued> Plan::ContinueFrom(const PlanState& state) const {
  const Impl& m = *impl_;
  STOKER_RETURN_IF_ERROR(plan::CheckStateVersion(state));
  if (m.datasets.size() < 2) {
    return FailedPrecondition(
        m.OtherPlanError(state) +
        ", and an edited mixture continues only into a mixture of at least two datasets");
  }
  const std::string stream_options = plan::StreamOptionsHash(m.options);
  std::vector<DatasetCursor> cursors = state.datasets;
  uint64_t global_row = state.global_row;
  if (cursors.empty()) {
    // A one-dataset run's checkpoint: its dataset is the one whose one-dataset plan has the
    // state's fingerprint, at (epoch, rows_consumed) of its own order.
    for (uint32_t k = 0; k < m.datasets.size() && cursors.empty(); ++k) {
      PlanOptions one = m.options;
      one.phases.clear();
      Result<std::unique_ptr<Plan>> single = Plan::Create({{m.datasets[k].lengths, 1.0}}, one);
      if (!single.ok() || (*single)->fingerprint() != state.fingerprint) continue;
      const DatasetLengths& l = *m.datasets[k].lengths;
      cursors.push_back({m.DatasetName(k), m.DatasetIds()[k], l.num_documents(),
                         l.shard_first_document.size() - 1, 0, state.position.epoch,
                         state.position.rows_consumed});
      global_row = state.position.rows_consumed;
      for (uint64_t e = 0; e < state.position.epoch; ++e) global_row += (*single)->rows_in_epoch(e);
    }
    if (cursors.empty()) {
      const std::string differ =
          plan::OptionsThatDiffer(state.options, plan::StreamOptionsText(m.options));
      return FailedPrecondition(
          m.OtherPlanError(state) +
          " and records no dataset positions to continue from: it is not a mixture's checkpoint "
          "and none of these datasets alone, with " +
          (differ.empty() ? std::string("these seq_len, seed, shuffle and pack options")
                          : "the options it was written with (" + differ + " differ)") +
          ", wrote it");
    }
  } else if (state.stream_options != stream_options) {
    const std::string differ =
        plan::OptionsThatDiffer(state.options, plan::StreamOptionsText(m.options));
    return FailedPrecondition(
        "the checkpoint's " + (differ.empty() ? "seq_len, seed, shuffle or pack options" : differ) +
        " differ from this plan's: every dataset's rows would differ, so what each had consumed "
        "cannot be found again (keep them as they were when editing a mixture)");
  }
  const std::vector<std::string>& ids = m.DatasetIds();
  std::vector<std::string> names;
  for (size_t k = 0; k < m.datasets.size(); ++k) names.push_back(m.DatasetName(k));
  // The writer's own origin on these datasets: the very plan that wrote the state, if nothing
  // was edited since.
  if (state.origin) {
    Result<plan::Mapping> same =
        plan::MapCursors(state.origin->datasets, state.origin->dormant, m.datasets, names, ids);
    if (same.ok()) {
      same->origin.row = state.origin->row;
      Result<std::unique_ptr<Impl>> impl =
          Impl::Build(m.datasets, m.options, m.counter, &same->origin);
      if (impl.ok() && (*impl)->Fingerprint() == state.fingerprint) {
        Continued out{std::unique_ptr<Plan>(new Plan(std::move(impl).value())), state.position,
                      "the checkpoint's own plan (continued at global row " +
                          std::to_string(state.origin->row) + ")\n"};
        return out;
      }
    }
  }
  std::vector<DatasetCursor> dormant;
  if (state.origin) dormant = state.origin->dormant;
  STOKER_ASSIGN_OR_RETURN(plan::Mapping mapping,
                          plan::MapCursors(cursors, dormant, m.datasets, names, ids));
  mapping.origin.row = global_row;
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl,
                          Impl::Build(m.datasets, m.options, m.counter, &mapping.origin));
  auto plan = std::unique_ptr<Plan>(new Plan(std::move(impl)));
  const uint64_t epoch_rows = plan->impl_->mixture_epoch_rows;
  const PlanPosition pos = plan->Normalize({global_row / epoch_rows, global_row % epoch_rows});
  Continued out{std::move(plan), pos, std::move(mapping.summary)};
  return out;
}

}  // namespace stoker
