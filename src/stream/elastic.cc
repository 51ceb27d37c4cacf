#include "stream/elastic.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "plan/options_text.h"
#include "stream/row_count.h"
#include "stream/stream_planner.h"

namespace stoker::stream {
namespace {

// E2: units with their ends (E1, written before units could end inside a shard, still reads).
constexpr std::string_view kMagic = "E2 ";
constexpr std::string_view kMagicV1 = "E1 ";

// One piece of an epoch's unread work: a reading unit (a shard, or its tail) or a document span.
struct Work {
  bool is_unit = false;
  ReadUnit unit;
  DocSpan span;
  uint64_t tokens = 0;  // what it yields (bytes where no pre-scan knows the tokens)
};

std::string StateError(size_t rank, const std::string& what) {
  return "stream elastic resume: the state of rank " + std::to_string(rank) + " " + what;
}

}  // namespace

bool IsElasticState(std::string_view s) {
  return s.substr(0, kMagic.size()) == kMagic || s.substr(0, kMagicV1.size()) == kMagicV1;
}

std::string EncodeElasticHeader(const ElasticEpoch& e) {
  std::string s(kMagic);
  for (uint64_t v : {e.epoch, uint64_t{e.shard_world}, e.steps, uint64_t{e.units.size()}}) {
    s += std::to_string(v) + ' ';
  }
  for (const ReadUnit& u : e.units) {
    for (uint64_t v : {uint64_t{u.shard}, u.record, u.offset, u.docs, u.end_record, u.end_docs}) {
      s += std::to_string(v) + ' ';
    }
  }
  return s + "| ";
}

Result<ElasticEpoch> DecodeElasticHeader(std::string_view* text) {
  const size_t bar = text->find('|');
  if (!IsElasticState(*text) || bar == std::string_view::npos) {
    return InvalidArgument("stream state: malformed elastic header");
  }
  const bool v1 = text->substr(0, kMagicV1.size()) == kMagicV1;
  IntReader in(text->substr(kMagic.size(), bar - kMagic.size()));
  auto get = [&in] { return in.Next(); };
  ElasticEpoch e;
  e.epoch = get();
  e.shard_world = static_cast<uint32_t>(get());
  e.steps = get();
  const uint64_t n = get();
  for (uint64_t i = 0; in.ok() && i < n; ++i) {
    ReadUnit u;
    u.shard = static_cast<uint32_t>(get());
    u.record = get();
    u.offset = get();
    u.docs = get();
    if (!v1) {
      u.end_record = get();
      u.end_docs = get();
    }
    e.units.push_back(u);
  }
  if (!in.ok() || !in.AtEnd() || e.shard_world == 0) {
    return InvalidArgument("stream state: malformed elastic header");
  }
  text->remove_prefix(bar + 1);
  return e;
}

Result<ShardScan> StreamPlanner::ScanFor(const std::vector<StreamShard>& shards) const {
  const ShardScan& have = *ctx_->scan;
  ShardScan out;
  out.lengths.resize(shards.size());
  out.offsets.resize(shards.size());
  out.skipped.resize(shards.size());
  // Chat: each document's trained targets (text scans keep none).
  const bool trained =
      ctx_->config.reader.chat != nullptr && have.trained.size() == have.lengths.size();
  if (trained) out.trained.resize(shards.size());
  std::map<std::tuple<uint32_t, uint64_t, uint64_t>, size_t> same;  // (file, begin, end) -> shard
  std::map<uint32_t, std::vector<size_t>> of_file;
  for (size_t n = 0; n < ctx_->shards.size(); ++n) {
    const StreamShard& sh = ctx_->shards[n];
    same[{sh.file, sh.begin, sh.end}] = n;
    of_file[sh.file].push_back(n);
  }
  for (size_t o = 0; o < shards.size(); ++o) {
    const StreamShard& want = shards[o];
    auto it = same.find({want.file, want.begin, want.end});
    if (it != same.end()) {
      out.lengths[o] = have.lengths[it->second];
      out.offsets[o] = have.offsets[it->second];
      out.skipped[o] = have.skipped[it->second];
      if (trained) out.trained[o] = have.trained[it->second];
      continue;
    }
    // Cut differently (an uncompressed JSONL file): the documents and skipped lines that start in
    // range.
    for (size_t n : of_file[want.file]) {
      if (have.offsets[n].size() != have.lengths[n].size()) {
        return Internal("stream elastic resume: no offsets for " + want.path);
      }
      for (size_t i = 0; i < have.offsets[n].size(); ++i) {
        if (have.offsets[n][i] >= want.begin && have.offsets[n][i] < want.end) {
          out.lengths[o].push_back(have.lengths[n][i]);
          out.offsets[o].push_back(have.offsets[n][i]);
          if (trained) out.trained[o].push_back(have.trained[n][i]);
        }
      }
      for (uint64_t key : have.skipped[n]) {
        if (key >= want.begin && key < want.end) out.skipped[o].push_back(key);
      }
    }
  }
  return out;
}

Result<PlanState> StreamPlanner::ElasticState(const std::vector<PlanState>& states) const {
  if (states.empty()) return InvalidArgument("stream elastic resume: no state given");
  const PlanState& first = states[0];
  const uint64_t old_world = first.world_size, old_batch = first.batch_size;
  if (old_world == 0 || old_batch == 0) {
    return InvalidArgument("stream elastic resume: the states name no world size or batch size");
  }
  if (states.size() != old_world) {
    return InvalidArgument("stream elastic resume: needs the state of every one of the " +
                           std::to_string(old_world) + " ranks, got " +
                           std::to_string(states.size()) + " (gather them in rank order)");
  }
  for (size_t r = 0; r < states.size(); ++r) {
    const PlanState& s = states[r];
    if (s.world_size != old_world || s.batch_size != old_batch ||
        s.fingerprint != first.fingerprint || !(s.position == first.position)) {
      return InvalidArgument(StateError(r, "is not of the world, stream and step of rank 0's"));
    }
  }
  const PlanPosition pos = first.position;
  const uint64_t E = pos.epoch;
  const uint64_t split = std::max<uint64_t>(options_.split_factor, 1);
  STOKER_ASSIGN_OR_RETURN(std::vector<StreamShard> world_shards, ExpandShards(old_world * split));
  // Token steps keep batch_size 1 in their states; the fingerprint names the loader's.
  const uint64_t named_batch = token_steps_ != nullptr ? loader_batch_size_ : old_batch;
  if (FingerprintFor(world_shards, static_cast<uint32_t>(old_world), named_batch) !=
      first.fingerprint) {
    const std::string differ = plan::OptionsThatDiffer(
        first.options, OptionsText(static_cast<uint32_t>(old_world), named_batch));
    return FailedPrecondition("stream elastic resume: the states belong to another stream (" +
                              (!differ.empty() ? differ + " differ"
                               : !first.options.empty()
                                   ? std::string("the inputs differ: other files or shards")
                                   : std::string("inputs, tokenizer, seed, seq_len, pack, "
                                                 "shuffle_buffer and steps_per_epoch must match")) +
                              ")");
  }
  if (token_steps_ != nullptr) {
    // Steps counted in tokens: only at an epoch's start, where nothing of the epoch was read; the
    // new world starts it as a fresh loader of its own would (its deal, windows and steps).
    if (pos.rows_consumed != 0) {
      return FailedPrecondition(
          "stream: an elastic resume (another world size) of steps counted in tokens is built "
          "only at an epoch's start (these states are at step " +
          std::to_string(pos.rows_consumed >> 16) + " of epoch " + std::to_string(E) +
          "): resume on the checkpoint's world size, or checkpoint at an epoch's end");
    }
    return BaseState({E, 0});
  }
  if (pos.rows_consumed % (old_world * old_batch) != 0) {
    return InvalidArgument("stream elastic resume: the states are not at a step boundary");
  }
  const uint64_t k = pos.rows_consumed / (old_world * old_batch);
  PlanState out = BaseState({E, k * global_rows_});
  if (k == 0) return out;  // an epoch's start: nothing was read

  // Every old rank's units (its reading order) and snapshot.
  uint32_t shard_world = 0;
  std::vector<std::vector<ReadUnit>> units(old_world);
  std::vector<RankSnapshot> snaps(old_world);
  for (size_t r = 0; r < old_world; ++r) {
    std::string_view text = states[r].stream;
    uint32_t sw = static_cast<uint32_t>(old_world);
    if (IsElasticState(text)) {
      STOKER_ASSIGN_OR_RETURN(ElasticEpoch e, DecodeElasticHeader(&text));
      if (e.epoch != E) return InvalidArgument(StateError(r, "has another epoch's header"));
      sw = e.shard_world;
      units[r] = std::move(e.units);
    }
    if (shard_world != 0 && sw != shard_world) {
      return InvalidArgument(StateError(r, "reads another world's shards than rank 0's"));
    }
    shard_world = sw;
    STOKER_ASSIGN_OR_RETURN(snaps[r], RankSnapshot::Decode(text));
  }
  std::vector<StreamShard> shards = world_shards;
  if (shard_world != old_world) {
    STOKER_ASSIGN_OR_RETURN(shards, ExpandShards(uint64_t{shard_world} * split));
  }
  const bool counted = options_.steps_per_epoch == 0;
  ShardScan scan;
  if (counted) {
    STOKER_ASSIGN_OR_RETURN(scan, ScanFor(shards));
  }
  const StreamConfig& c = ctx_->config;
  const std::vector<std::vector<ReadUnit>> old_deal = DealEpoch(
      shards, counted ? &scan : nullptr, c.seed, E, static_cast<uint32_t>(old_world), c.pack);
  for (size_t r = 0; r < old_world; ++r) {
    if (!IsElasticState(states[r].stream)) units[r] = old_deal[r];
  }

  // The epoch's unread work, rank by rank: documents of stream epoch E only (what a rank drew
  // from its next epoch's stream comes again in that epoch).
  std::vector<Work> work;
  auto unit_tokens = [&](const ReadUnit& u) -> uint64_t {
    if (u.shard >= shards.size()) return 0;
    if (!counted) return shards[u.shard].end - std::min(shards[u.shard].end, u.offset);
    std::vector<uint32_t> l;
    AppendUnitLengths(scan, u, &l);
    return std::accumulate(l.begin(), l.end(), uint64_t{0});
  };
  auto add_span = [&](size_t r, const DocSpan& d) -> Status {
    if (d.end == RankSnapshot::kWhole) {
      return InvalidArgument(StateError(r, "was written by an older stoker (no token ranges)"));
    }
    if (d.stream_epoch == E && d.begin < d.end) {
      work.push_back({false, {}, d, d.end - d.begin});
    }
    return Status::OK();
  };
  for (size_t r = 0; r < old_world; ++r) {
    const RankSnapshot& s = snaps[r];
    if (s.stream_epoch == E) {
      if (s.shard_pos > units[r].size()) {
        return InvalidArgument(StateError(r, "is past its shards"));
      }
      for (size_t j = s.shard_pos; j < units[r].size(); ++j) {
        ReadUnit u = units[r][j];
        if (j == s.shard_pos && s.reader_open) {
          u = {u.shard, s.next_record, s.next_offset, s.next_docs, u.end_record, u.end_docs};
        }
        if (u.shard >= shards.size()) return InvalidArgument(StateError(r, "names no shard"));
        const uint64_t t = unit_tokens(u);
        if (t > 0) work.push_back({true, u, {}, t});
      }
      for (const DocSpan& d : s.buffer) STOKER_RETURN_IF_ERROR(add_span(r, d));
    }
    if (c.pack == PackMode::kConcat && !s.group.empty()) {
      DocSpan d = s.group.front();
      d.begin = s.cursor;
      STOKER_RETURN_IF_ERROR(add_span(r, d));
    } else if (c.pack == PackMode::kBestFit && !s.group.empty()) {
      std::vector<std::pair<uint64_t, uint64_t>> spans;
      for (const DocSpan& d : s.group) {
        if (d.end == RankSnapshot::kWhole) return add_span(r, d);
        spans.push_back({d.begin, d.end});
      }
      const auto rows = BestFitWindow(spans, c);
      for (size_t row = s.cursor; row < rows.size(); ++row) {
        for (const WindowChunk& ch : rows[row]) {
          DocSpan d = s.group[ch.doc];
          d.begin = ch.offset;
          d.end = ch.offset + ch.length;
          STOKER_RETURN_IF_ERROR(add_span(r, d));
        }
      }
    }
  }

  // Deal it: units largest first, then the spans in order, each to the least loaded new rank.
  const uint32_t W = c.world_size;
  std::vector<size_t> order(work.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (work[a].is_unit != work[b].is_unit) return work[a].is_unit;
    return work[a].is_unit && work[a].tokens > work[b].tokens;
  });
  std::vector<uint64_t> load(W, 0);
  std::vector<std::vector<ReadUnit>> new_units(W);
  std::vector<std::vector<DocSpan>> new_spans(W);
  for (size_t i : order) {
    const size_t r = std::min_element(load.begin(), load.end()) - load.begin();
    load[r] += work[i].tokens;
    if (work[i].is_unit) {
      new_units[r].push_back(work[i].unit);
    } else {
      new_spans[r].push_back(work[i].span);
    }
  }

  // Equal steps for the rest of the epoch: the fewest rows any new rank can make.
  auto rng_of = [&](uint32_t r) { return MixKey(MixKey(c.seed, E, k), old_world, 0x20000 + r); };
  uint64_t steps = options_.steps_per_epoch;
  if (counted) {
    uint64_t rows = UINT64_MAX;
    for (uint32_t r = 0; r < W; ++r) {
      std::vector<uint64_t> initial;
      for (const DocSpan& d : new_spans[r]) initial.push_back(d.end - d.begin);
      std::vector<uint32_t> stream;
      for (const ReadUnit& u : new_units[r]) AppendUnitLengths(scan, u, &stream);
      rows = std::min(rows, CountRows(c, rng_of(r), initial, stream));
    }
    steps = k + rows / batch_size_;
  }
  ElasticEpoch e;
  e.epoch = E;
  e.shard_world = shard_world;
  e.steps = steps;
  e.units = std::move(new_units[c.rank]);
  RankSnapshot snap;
  snap.stream_epoch = E;
  snap.rng = rng_of(c.rank);
  snap.buffer = std::move(new_spans[c.rank]);
  out.stream = EncodeElasticHeader(e) + snap.Encode();
  return out;
}

}  // namespace stoker::stream
