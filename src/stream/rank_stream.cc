#include "stream/rank_stream.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "stream/row_count.h"

namespace stoker::stream {

std::string RankSnapshot::Encode() const {
  std::string s = "2";
  auto put = [&s](uint64_t v) {
    s += ' ';
    s += std::to_string(v);
  };
  for (uint64_t v : {stream_epoch, shard_pos, uint64_t{reader_open}, next_record, next_offset,
                     next_docs, rng, cursor}) {
    put(v);
  }
  for (const std::vector<DocSpan>* docs : {&buffer, &group}) {
    put(docs->size());
    for (const DocSpan& d : *docs) {
      for (uint64_t v :
           {uint64_t{d.ref.shard}, d.ref.record, d.ref.offset, d.stream_epoch, d.begin, d.end}) {
        put(v);
      }
    }
  }
  return s;
}

uint64_t IntReader::Next() {
  while (p_ < end_ && *p_ == ' ') ++p_;
  uint64_t v = 0;
  auto [next, ec] = std::from_chars(p_, end_, v);
  if (ec != std::errc()) ok_ = false;
  p_ = next;
  return v;
}

bool IntReader::AtEnd() {
  while (p_ < end_ && (*p_ == ' ' || *p_ == '\n')) ++p_;
  return p_ == end_;
}

Result<RankSnapshot> RankSnapshot::Decode(std::string_view text) {
  IntReader in(text);
  auto get = [&in] { return in.Next(); };
  RankSnapshot s;
  const uint64_t version = get();
  if (!in.ok() || (version != 1 && version != 2)) {
    return InvalidArgument("stream state: unsupported or malformed version");
  }
  s.stream_epoch = get();
  s.shard_pos = get();
  s.reader_open = get() != 0;
  s.next_record = get();
  s.next_offset = get();
  if (version >= 2) s.next_docs = get();
  s.rng = get();
  s.cursor = get();
  for (std::vector<DocSpan>* docs : {&s.buffer, &s.group}) {
    const uint64_t n = get();
    for (uint64_t i = 0; in.ok() && i < n; ++i) {
      DocSpan d;
      d.ref.shard = static_cast<uint32_t>(get());
      d.ref.record = get();
      d.ref.offset = get();
      d.stream_epoch = s.stream_epoch;  // version 1: buffered documents are the stream epoch's
      d.end = kWhole;
      if (version >= 2) {
        d.stream_epoch = get();
        d.begin = get();
        d.end = get();
      } else if (docs == &s.group) {
        d.stream_epoch = get();
      }
      docs->push_back(d);
    }
  }
  if (!in.ok() || !in.AtEnd()) return InvalidArgument("stream state: malformed integers");
  return s;
}

RankStream::RankStream(std::shared_ptr<const StreamContext> ctx, uint64_t epoch,
                       std::shared_ptr<const ElasticEpoch> elastic)
    : ctx_(std::move(ctx)),
      elastic_(std::move(elastic)),
      docs_(&ctx_->shards, ctx_->tokenizer.get(), ctx_->config.reader, ctx_->pool.get()) {
  StartStreamEpoch(epoch);
}

const std::vector<StreamShard>& RankStream::ShardsOf(uint64_t stream_epoch) const {
  return elastic_ && elastic_->epoch == stream_epoch ? elastic_->shards : ctx_->shards;
}

void RankStream::StartStreamEpoch(uint64_t e) {
  const StreamConfig& c = ctx_->config;
  stream_epoch_ = e;
  if (elastic_ && elastic_->epoch == e) {
    dealt_ = elastic_->units;
  } else {
    dealt_ = DealEpoch(ctx_->shards, ctx_->scan.get(), c.seed, e, c.world_size, c.pack)[c.rank];
  }
  docs_.Reset(&ShardsOf(e), &dealt_, {});
  input_done_ = false;
  rng_ = MixKey(c.seed, e, 0x10000 + c.rank);
}

Result<bool> RankStream::ReadOne(Doc* out) {
  PipelineDoc d;
  const uint64_t limit = ctx_->config.drop_longer_than;
  do {
    STOKER_ASSIGN_OR_RETURN(bool got, docs_.Next(&d));
    if (!got) return false;
  } while (limit > 0 && d.tokens->size() > limit);  // left out (CountRows leaves it out too)
  out->ref = d.ref;
  out->stream_epoch = stream_epoch_;
  out->tokens = std::move(d.tokens);
  out->spans = std::move(d.spans);
  out->begin = 0;
  out->end = out->tokens->size();
  return true;
}

Status RankStream::FillBuffer() {
  const uint64_t cap = std::max<uint64_t>(ctx_->config.shuffle_buffer, 1);
  while (buffer_.size() < cap && !input_done_) {
    Doc d;
    STOKER_ASSIGN_OR_RETURN(bool got, ReadOne(&d));
    if (!got) {
      input_done_ = true;
      break;
    }
    buffer_.push_back(std::move(d));
  }
  return Status::OK();
}

Result<RankStream::Doc> RankStream::NextDoc() {
  const uint64_t cap = std::max<uint64_t>(ctx_->config.shuffle_buffer, 1);
  for (int empty = 0; empty < 8;) {
    STOKER_RETURN_IF_ERROR(FillBuffer());
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
                            std::to_string(ctx_->shards.size()) + " shards)");
}

void RankStream::PackWindow() {
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const Doc& d : group_) spans.push_back({d.begin, d.end});
  window_rows_.clear();
  for (const std::vector<WindowChunk>& chunks : BestFitWindow(spans, ctx_->config)) {
    PackedRow row;
    for (const WindowChunk& k : chunks) {
      const Doc& d = group_[k.doc];
      row.push_back({d.ref, d.stream_epoch, d.tokens, d.spans, k.offset, k.length});
    }
    window_rows_.push_back(std::move(row));
  }
}

Status RankStream::LoadBestFitWindow() {
  group_.clear();
  window_rows_.clear();
  cursor_ = 0;
  const uint64_t w = std::max<uint64_t>(ctx_->config.bestfit_window, 1);
  for (uint64_t i = 0; i < w; ++i) {
    // The epoch's last window is packed alone: its rows are the epoch's, not mixed with the next
    // epoch's documents (a rank with fewer documents than a window would else deliver mostly
    // those). An empty window takes the next epoch's.
    STOKER_RETURN_IF_ERROR(FillBuffer());
    if (i > 0 && input_done_ && buffer_.empty()) break;
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
      row.push_back(
          {d.ref, d.stream_epoch, d.tokens, d.spans, d.begin, std::min(S, d.end - d.begin)});
      return row;
    }
    case PackMode::kConcat: {
      uint64_t have = 0;
      while (have < S) {
        if (group_.empty()) {
          STOKER_ASSIGN_OR_RETURN(Doc d, NextDoc());
          cursor_ = d.begin;
          group_.push_back(std::move(d));
        }
        const Doc& d = group_.front();
        const uint64_t take = std::min<uint64_t>(S - have, d.end - cursor_);
        row.push_back({d.ref, d.stream_epoch, d.tokens, d.spans, cursor_, take});
        have += take;
        cursor_ += take;
        if (cursor_ == d.end) {
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
    s.next_docs = pos.docs;
  }
  s.rng = rng_;
  s.cursor = cursor_;
  for (const Doc& d : buffer_) s.buffer.push_back({d.ref, d.stream_epoch, d.begin, d.end});
  for (const Doc& d : group_) s.group.push_back({d.ref, d.stream_epoch, d.begin, d.end});
  return s;
}

Status RankStream::Reread(const std::vector<DocSpan>& spans, std::vector<Doc>* out) {
  // One pass per (shard list, shard), records increasing; then back into the original order.
  std::map<std::pair<const std::vector<StreamShard>*, uint32_t>, std::vector<size_t>> by_shard;
  for (size_t i = 0; i < spans.size(); ++i) {
    const std::vector<StreamShard>& shards = ShardsOf(spans[i].stream_epoch);
    if (spans[i].ref.shard >= shards.size()) {
      return InvalidArgument("stream state: shard " + std::to_string(spans[i].ref.shard) +
                             " does not exist");
    }
    by_shard[{&shards, spans[i].ref.shard}].push_back(i);
  }
  out->assign(spans.size(), Doc());
  for (auto& [key, idx] : by_shard) {
    ShardReader reader(key.first, ctx_->tokenizer.get(), ctx_->config.reader);
    std::sort(idx.begin(), idx.end(),
              [&](size_t a, size_t b) { return spans[a].ref.record < spans[b].ref.record; });
    std::vector<DocRef> want;
    for (size_t i : idx) want.push_back(spans[i].ref);
    std::vector<StreamDoc> docs;
    STOKER_RETURN_IF_ERROR(reader.ReadRefs(want, &docs));
    for (size_t k = 0; k < idx.size(); ++k) {
      const DocSpan& span = spans[idx[k]];
      Doc& d = (*out)[idx[k]];
      d.ref = span.ref;
      d.stream_epoch = span.stream_epoch;
      d.tokens = std::make_shared<const std::vector<int32_t>>(std::move(docs[k].tokens));
      if (ctx_->config.reader.chat) {
        d.spans = std::make_shared<const std::vector<int32_t>>(std::move(docs[k].spans));
      }
      d.begin = span.begin;
      d.end = span.end == RankSnapshot::kWhole ? d.tokens->size() : span.end;
      if (d.begin > d.end || d.end > d.tokens->size()) {
        return InvalidArgument(
            "stream state: token range " + std::to_string(d.begin) + ".." + std::to_string(d.end) +
            " outside the document (" + std::to_string(d.tokens->size()) + " tokens) of " +
            (*key.first)[span.ref.shard].path + " record " + std::to_string(span.ref.record));
      }
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
  docs_.Reset(
      &ShardsOf(snap.stream_epoch), &dealt_,
      {snap.shard_pos, snap.reader_open, snap.next_record, snap.next_offset, snap.next_docs});
  rng_ = snap.rng;
  STOKER_RETURN_IF_ERROR(Reread(snap.buffer, &buffer_));
  STOKER_RETURN_IF_ERROR(Reread(snap.group, &group_));
  cursor_ = snap.cursor;
  window_rows_.clear();
  if (ctx_->config.pack == PackMode::kBestFit && !group_.empty()) {
    PackWindow();  // the same rows as before; cursor_ says how many were emitted
  }
  return Status::OK();
}

}  // namespace stoker::stream
