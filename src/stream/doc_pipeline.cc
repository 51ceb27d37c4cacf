#include "stream/doc_pipeline.h"

#include <algorithm>

namespace stoker::stream {
namespace {

// A chunk is one pool task: big enough that queueing costs nothing next to tokenizing it, small
// enough that the first documents arrive soon and `depth` chunks stay in little memory.
constexpr size_t kChunkItems = 64;
constexpr size_t kChunkBytes = 64 << 10;

}  // namespace

std::vector<ReadUnit> WholeShards(const std::vector<uint32_t>& shards) {
  std::vector<ReadUnit> out;
  out.reserve(shards.size());
  for (uint32_t s : shards) out.push_back({s, 0, 0, 0, ReadUnit::kNoEnd, ReadUnit::kNoEnd});
  return out;
}

DocPipeline::DocPipeline(const std::vector<StreamShard>* shards, const Tokenizer* tokenizer,
                         const ReaderOptions& options, EncodePool* pool)
    : reader_(shards, tokenizer, options),
      pool_(pool),
      depth_(pool == nullptr ? 1 : 2 * static_cast<size_t>(pool->threads()) + 2) {}

DocPipeline::~DocPipeline() { WaitIdle(); }

void DocPipeline::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return in_flight_ == 0; });
}

void DocPipeline::Reset(const std::vector<StreamShard>* shards, const std::vector<ReadUnit>* dealt,
                        const StreamPosition& pos) {
  WaitIdle();
  reader_.set_shards(shards);
  chunks_.clear();
  front_item_ = 0;
  failed_ = Status::OK();
  dealt_ = dealt;
  pos_ = pos;
  read_pos_ = pos;
  read_done_ = false;
  opened_ = false;
}

void DocPipeline::ReadChunk(Chunk* c) {
  size_t bytes = 0;
  while (c->items.size() < kChunkItems && bytes < kChunkBytes) {
    if (!opened_) {
      if (read_pos_.shard_pos >= dealt_->size()) {
        read_done_ = true;
        return;
      }
      // A Reset position inside a shard opens it there; any other unit opens at its start.
      const bool inside = read_pos_.reader_open;
      const ReadUnit& u = (*dealt_)[read_pos_.shard_pos];
      c->read_error = reader_.Open(u.shard, inside ? read_pos_.next_record : u.record,
                                   inside ? read_pos_.next_offset : u.offset, u.end_record);
      if (!c->read_error.ok()) break;
      opened_ = true;
      read_pos_.reader_open = true;
    }
    RawItem item;
    Result<bool> got = reader_.NextRaw(&item);
    if (!got.ok()) {
      c->read_error = got.status();
      break;
    }
    if (!*got) {
      read_pos_ = {read_pos_.shard_pos + 1, false, 0, 0, 0};
      opened_ = false;
      continue;
    }
    read_pos_.next_record = reader_.next_record();
    read_pos_.next_offset = reader_.next_offset();
    bytes += item.raw.data.size() + item.raw.tokens.size() * sizeof(int32_t);
    c->items.push_back(std::move(item));
    c->after.push_back(read_pos_);
  }
  if (!c->read_error.ok()) read_done_ = true;  // nothing is read past an error
}

void DocPipeline::Encode(Chunk* c) const {
  EncodedDocuments scratch;
  c->tokens.assign(c->items.size(), nullptr);
  c->spans.assign(c->items.size(), nullptr);
  for (size_t i = 0; i < c->items.size(); ++i) {
    bool kept = false;
    Status st = reader_.EncodeItem(c->items[i], &scratch, &kept);
    if (!st.ok()) {
      c->encode_error = st;
      c->error_at = i;
      return;
    }
    c->counters.Add(scratch.counters);
    if (!kept) continue;
    c->tokens[i] = std::make_shared<const std::vector<int32_t>>(scratch.tokens);
    if (!scratch.span_lengths.empty()) {
      c->spans[i] = std::make_shared<const std::vector<int32_t>>(scratch.spans);
    }
  }
  c->error_at = c->items.size();
}

void DocPipeline::Fill() {
  while (!read_done_ && chunks_.size() < depth_) {
    auto c = std::make_shared<Chunk>();
    ReadChunk(c.get());
    if (c->items.empty() && c->read_error.ok()) break;  // nothing more to read
    chunks_.push_back(c);
    if (pool_ == nullptr) {
      Encode(c.get());
      c->done = true;
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++in_flight_;
    }
    pool_->Submit([this, c] {
      Encode(c.get());
      std::lock_guard<std::mutex> lock(mu_);
      c->done = true;
      --in_flight_;
      cv_.notify_all();
    });
  }
}

Result<bool> DocPipeline::Next(PipelineDoc* out) {
  STOKER_RETURN_IF_ERROR(failed_);
  for (;;) {
    Fill();
    if (chunks_.empty()) {
      pos_ = {dealt_->size(), false, 0, 0, 0};
      return false;
    }
    Chunk& c = *chunks_.front();
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&c] { return c.done; });
    }
    if (front_item_ == 0) counters_.Add(c.counters);
    while (front_item_ < c.items.size()) {
      const size_t i = front_item_++;
      if (i == c.error_at) {
        failed_ = c.encode_error;
        return failed_;
      }
      if (!c.tokens[i]) continue;
      out->ref = c.items[i].ref;
      out->tokens = std::move(c.tokens[i]);
      out->spans = std::move(c.spans[i]);
      const StreamPosition& next = c.after[i];
      const uint64_t before = pos_.reader_open && pos_.shard_pos == next.shard_pos
                                  ? pos_.docs
                                  : (*dealt_)[next.shard_pos].docs;
      pos_ = next;
      pos_.docs = before + 1;
      return true;
    }
    if (!c.read_error.ok()) {
      failed_ = c.read_error;
      return failed_;
    }
    chunks_.pop_front();
    front_item_ = 0;
  }
}

}  // namespace stoker::stream
