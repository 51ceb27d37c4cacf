#include "stream/rank_stream.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "plan/best_fit.h"

namespace stoker::stream {

std::string RankSnapshot::Encode() const {
  std::string s = "1";
  auto put = [&s](uint64_t v) {
    s += ' ';
    s += std::to_string(v);
  };
  put(stream_epoch);
  put(shard_pos);
  put(reader_open ? 1 : 0);
  put(next_record);
  put(next_offset);
  put(rng);
  put(cursor);
  put(buffer.size());
  for (const DocRef& r : buffer) {
    put(r.shard);
    put(r.record);
    put(r.offset);
  }
  put(group.size());
  for (size_t i = 0; i < group.size(); ++i) {
    put(group[i].shard);
    put(group[i].record);
    put(group[i].offset);
    put(group_epochs[i]);
  }
  return s;
}

Result<RankSnapshot> RankSnapshot::Decode(std::string_view text) {
  const char* p = text.data();
  const char* end = p + text.size();
  bool ok = true;
  auto get = [&]() -> uint64_t {
    while (p < end && *p == ' ') ++p;
    uint64_t v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc()) ok = false;
    p = next;
    return v;
  };
  RankSnapshot s;
  if (get() != 1 || !ok) return InvalidArgument("stream state: unsupported or malformed version");
  s.stream_epoch = get();
  s.shard_pos = get();
  s.reader_open = get() != 0;
  s.next_record = get();
  s.next_offset = get();
  s.rng = get();
  s.cursor = get();
  uint64_t n = get();
  for (uint64_t i = 0; ok && i < n; ++i) {
    DocRef r;
    r.shard = static_cast<uint32_t>(get());
    r.record = get();
    r.offset = get();
    s.buffer.push_back(r);
  }
  n = get();
  for (uint64_t i = 0; ok && i < n; ++i) {
    DocRef r;
    r.shard = static_cast<uint32_t>(get());
    r.record = get();
    r.offset = get();
    s.group.push_back(r);
    s.group_epochs.push_back(get());
  }
  if (!ok) return InvalidArgument("stream state: malformed integers");
  return s;
}

RankStream::RankStream(std::shared_ptr<const StreamContext> ctx, uint64_t epoch)
    : ctx_(std::move(ctx)),
      docs_(&ctx_->shards, ctx_->tokenizer.get(), ctx_->config.reader, ctx_->pool.get()) {
  StartStreamEpoch(epoch);
}

void RankStream::StartStreamEpoch(uint64_t e) {
  const StreamConfig& c = ctx_->config;
  stream_epoch_ = e;
  dealt_ = DealShards(ctx_->shards, c.seed, e, c.world_size)[c.rank];
  docs_.Reset(&dealt_, {});
  input_done_ = false;
  rng_ = MixKey(c.seed, e, 0x10000 + c.rank);
}

Result<bool> RankStream::ReadOne(Doc* out) {
  PipelineDoc d;
  STOKER_ASSIGN_OR_RETURN(bool got, docs_.Next(&d));
  if (!got) return false;
  out->ref = d.ref;
  out->stream_epoch = stream_epoch_;
  out->tokens = std::move(d.tokens);
  return true;
}

Result<RankStream::Doc> RankStream::NextDoc() {
  const uint64_t cap = std::max<uint64_t>(ctx_->config.shuffle_buffer, 1);
  for (int empty = 0; empty < 8;) {
    while (buffer_.size() < cap && !input_done_) {
      Doc d;
      STOKER_ASSIGN_OR_RETURN(bool got, ReadOne(&d));
      if (!got) {
        input_done_ = true;
        break;
      }
      buffer_.push_back(std::move(d));
    }
    if (!buffer_.empty()) {
      const size_t j = cap == 1 ? 0 : SplitMix64(&rng_) % buffer_.size();
      Doc out = std::move(buffer_[j]);
      if (j + 1 != buffer_.size()) buffer_[j] = std::move(buffer_.back());
      buffer_.pop_back();
      return out;
    }
    // This epoch's stream is exhausted: continue into the next epoch's.
    StartStreamEpoch(stream_epoch_ + 1);
    ++empty;
  }
  return FailedPrecondition("stream: rank " + std::to_string(ctx_->config.rank) + " of " +
                            std::to_string(ctx_->config.world_size) +
                            " found no document in 8 epochs of its shards (" +
                            std::to_string(ctx_->shards.size()) +
                            " shards; compressed files and text files cannot be split)");
}

void RankStream::PackWindow() {
  const uint64_t S = ctx_->config.seq_len;
  std::vector<uint64_t> lengths;
  std::vector<std::pair<size_t, uint64_t>> items;  // (document, offset)
  for (size_t i = 0; i < group_.size(); ++i) {
    const uint64_t n = group_[i].tokens->size();
    for (uint64_t off = 0; off < n; off += S) {
      items.push_back({i, off});
      lengths.push_back(std::min(S, n - off));
    }
  }
  std::vector<uint32_t> bin;
  window_rows_.assign(plan::BestFitDecreasing(lengths, S, &bin), PackedRow());
  for (size_t k = 0; k < items.size(); ++k) {
    const Doc& d = group_[items[k].first];
    window_rows_[bin[k]].push_back({d.ref, d.stream_epoch, d.tokens, items[k].second, lengths[k]});
  }
}

Status RankStream::LoadBestFitWindow() {
  group_.clear();
  window_rows_.clear();
  cursor_ = 0;
  const uint64_t w = std::max<uint64_t>(ctx_->config.bestfit_window, 1);
  for (uint64_t i = 0; i < w; ++i) {
    STOKER_ASSIGN_OR_RETURN(Doc d, NextDoc());
    group_.push_back(std::move(d));
  }
  PackWindow();
  return Status::OK();
}

Result<PackedRow> RankStream::NextRow() {
  const uint64_t S = ctx_->config.seq_len;
  PackedRow row;
  switch (ctx_->config.pack) {
    case PackMode::kPad: {
      STOKER_ASSIGN_OR_RETURN(Doc d, NextDoc());
      row.push_back({d.ref, d.stream_epoch, d.tokens, 0, std::min<uint64_t>(S, d.tokens->size())});
      return row;
    }
    case PackMode::kConcat: {
      uint64_t have = 0;
      while (have < S) {
        if (group_.empty()) {
          STOKER_ASSIGN_OR_RETURN(Doc d, NextDoc());
          group_.push_back(std::move(d));
          cursor_ = 0;
        }
        const Doc& d = group_.front();
        const uint64_t take = std::min<uint64_t>(S - have, d.tokens->size() - cursor_);
        row.push_back({d.ref, d.stream_epoch, d.tokens, cursor_, take});
        have += take;
        cursor_ += take;
        if (cursor_ == d.tokens->size()) {
          group_.clear();
          cursor_ = 0;
        }
      }
      return row;
    }
    case PackMode::kBestFit: {
      if (cursor_ >= window_rows_.size()) STOKER_RETURN_IF_ERROR(LoadBestFitWindow());
      return window_rows_[cursor_++];
    }
  }
  return Internal("stream: unknown pack mode");
}

RankSnapshot RankStream::Snapshot() const {
  RankSnapshot s;
  const StreamPosition& pos = docs_.position();
  s.stream_epoch = stream_epoch_;
  s.shard_pos = pos.shard_pos;
  s.reader_open = pos.reader_open;
  if (pos.reader_open) {
    s.next_record = pos.next_record;
    s.next_offset = pos.next_offset;
  }
  s.rng = rng_;
  s.cursor = cursor_;
  for (const Doc& d : buffer_) s.buffer.push_back(d.ref);
  for (const Doc& d : group_) {
    s.group.push_back(d.ref);
    s.group_epochs.push_back(d.stream_epoch);
  }
  return s;
}

Status RankStream::Reread(const std::vector<DocRef>& refs, const std::vector<uint64_t>& epochs,
                          std::vector<Doc>* out) {
  // One pass per shard, offsets increasing; then back into the original order.
  std::map<uint32_t, std::vector<size_t>> by_shard;
  for (size_t i = 0; i < refs.size(); ++i) {
    if (refs[i].shard >= ctx_->shards.size()) {
      return InvalidArgument("stream state: shard " + std::to_string(refs[i].shard) +
                             " does not exist");
    }
    by_shard[refs[i].shard].push_back(i);
  }
  out->assign(refs.size(), Doc());
  ShardReader reader(&ctx_->shards, ctx_->tokenizer.get(), ctx_->config.reader);
  for (auto& [shard, idx] : by_shard) {
    std::sort(idx.begin(), idx.end(),
              [&](size_t a, size_t b) { return refs[a].record < refs[b].record; });
    std::vector<DocRef> want;
    for (size_t i : idx) want.push_back(refs[i]);
    std::vector<StreamDoc> docs;
    STOKER_RETURN_IF_ERROR(reader.ReadRefs(want, &docs));
    for (size_t k = 0; k < idx.size(); ++k) {
      Doc& d = (*out)[idx[k]];
      d.ref = refs[idx[k]];
      d.stream_epoch = epochs[idx[k]];
      d.tokens = std::make_shared<const std::vector<int32_t>>(std::move(docs[k].tokens));
    }
  }
  return Status::OK();
}

Status RankStream::Restore(const RankSnapshot& snap) {
  StartStreamEpoch(snap.stream_epoch);
  if (snap.shard_pos > dealt_.size()) {
    return InvalidArgument("stream state: shard position past the end");
  }
  if (snap.reader_open && snap.shard_pos >= dealt_.size()) {
    return InvalidArgument("stream state: open reader past the end");
  }
  docs_.Reset(&dealt_, {snap.shard_pos, snap.reader_open, snap.next_record, snap.next_offset});
  rng_ = snap.rng;
  // Every buffered document came from the current stream epoch.
  std::vector<uint64_t> epochs(snap.buffer.size(), snap.stream_epoch);
  STOKER_RETURN_IF_ERROR(Reread(snap.buffer, epochs, &buffer_));
  STOKER_RETURN_IF_ERROR(Reread(snap.group, snap.group_epochs, &group_));
  cursor_ = snap.cursor;
  window_rows_.clear();
  if (ctx_->config.pack == PackMode::kBestFit && !group_.empty()) {
    PackWindow();  // the same rows as before; cursor_ says how many were emitted
  }
  return Status::OK();
}

}  // namespace stoker::stream
