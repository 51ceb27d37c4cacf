#include "stream/stream_planner.h"

#include <algorithm>
#include <optional>
#include <thread>

#include "chat/chat_encoder.h"
#include "common/env.h"
#include "common/hash.h"
#include "format/loss_mask.h"
#include "loader/model_cost.h"
#include "loader/planned_dataset.h"
#include "plan/document_padding.h"
#include "plan/options_text.h"
#include "plan/plan_options_table.h"
#include "stream/elastic.h"
#include "stream/row_count.h"
#include "stream/stream_chat.h"
#include "stream/stream_options_table.h"

namespace stoker::stream {
namespace {

// Serves the tokens of the planned pieces: document `doc` is a piece handle of the planner, and
// exists while the planner keeps its step (an evicted or unknown handle is no document).
class StreamPieceReader final : public DocumentReader {
 public:
  explicit StreamPieceReader(const StreamPlanner* planner) : planner_(planner) {}
  StorageStats storage_stats() const override { return planner_->storage_stats(); }
  const std::string& path() const override { return name_; }
  std::optional<uint64_t> FindDocumentLength(uint64_t doc) const override {
    Tokens t = planner_->PieceTokens(doc);
    if (!t) return std::nullopt;
    return t->size();
  }
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const override {
    return ReadT(doc, offset, count, out);
  }
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const override {
    return ReadT(doc, offset, count, out);
  }
  bool has_loss_mask() const override { return planner_->chat(); }
  Status ReadLossMask(uint64_t doc, uint64_t offset, uint64_t count, uint8_t* out) const override {
    Tokens t = planner_->PieceTokens(doc);
    Tokens spans = planner_->PieceSpans(doc);
    if (!t || !spans) {
      return Internal("stream: piece " + std::to_string(doc) + " has no loss mask (evicted?)");
    }
    if (offset + count > t->size()) return OutOfRange("stream: read past a document's end");
    SpansToMask(*spans, offset, count, out);
    return Status::OK();
  }

 private:
  template <typename T>
  Status ReadT(uint64_t doc, uint64_t offset, uint64_t count, T* out) const {
    Tokens t = planner_->PieceTokens(doc);
    if (!t) return Internal("stream: piece " + std::to_string(doc) + " was evicted before use");
    if (offset + count > t->size()) return OutOfRange("stream: read past a document's end");
    std::copy(t->begin() + offset, t->begin() + offset + count, out);
    return Status::OK();
  }
  const StreamPlanner* planner_;
  std::string name_ = "stream";
};

}  // namespace

Status CheckStreamLoaderOptions(const LoaderOptions& o) {
  const PlanOptions plan_defaults;
  if (o.shuffle != ShuffleMode::kGlobal) {
    return InvalidArgument("stream: shuffle='" + std::string(ShuffleModeName(o.shuffle)) +
                           "' does not apply to a stream: its order is the seeded dealing of "
                           "shards and the shuffle buffer (shuffle_buffer=, --shuffle-buffer; 1 = "
                           "file order within each rank's shards)");
  }
  if (o.block_shards != plan_defaults.block_shards) {
    return InvalidArgument(
        "stream: block_shards applies to shuffle='block' of token datasets, "
        "not to a stream");
  }
  if (o.long_documents == LongDocuments::kTruncate) {
    return InvalidArgument(
        "stream: long_documents='truncate' applies to token datasets; a stream splits long "
        "documents, or drops them (long_documents='drop', the default for chat records)");
  }
  // The packer counts each piece's padded room and closes a row at max_documents_per_row, as
  // the plan does (row_count.h), under the plan's conditions; steps counted in tokens place no
  // rows and check the microbatch budget instead (stream_token_steps.h).
  if (o.tokens_per_step == 0) {
    STOKER_RETURN_IF_ERROR(plan::CheckDocumentPadding(o).WithContext("stream"));
  }
  if (o.remainder != RemainderPolicy::kDropLast) {
    return InvalidArgument(
        "stream: remainder 'pad' (drop_last=False) does not apply to a stream: "
        "every rank gets the same whole steps per epoch and a rank's short "
        "stream continues into the next epoch's (docs/streaming.md)");
  }
  return Status::OK();
}

Result<std::shared_ptr<StreamPlanner>> StreamPlanner::Create(const StreamOptions& options,
                                                             const LoaderOptions& loader) {
  if (options.inputs.empty()) return InvalidArgument("stream: no input given");
  if (!loader.tokens_per_step_schedule.empty()) {
    return InvalidArgument(
        "stream: a batch-size schedule (tokens_per_step_schedule '" +
        loader.tokens_per_step_schedule +
        "') is not followed on a stream: pack the data (`stoker pack`) and load it as a token "
        "dataset with the schedule in its mixture file, or use a constant tokens_per_step");
  }
  STOKER_RETURN_IF_ERROR(CheckStreamLoaderOptions(loader));
  const bool token_steps = loader.tokens_per_step > 0;
  // Steps counted in tokens: each rank's step is ⌈tokens_per_step / world_size⌉ tokens, placed as
  // pieces of at most max_tokens_per_microbatch (stream_token_steps.h).
  const uint64_t microbatch_budget =
      loader.max_tokens_per_microbatch > 0 ? loader.max_tokens_per_microbatch : loader.seq_len;
  if (token_steps && options.steps_per_epoch > 0) {
    return InvalidArgument(
        "stream: tokens_per_step needs the pre-scan (every rank replays every rank's steps from "
        "the documents' lengths): leave steps_per_epoch out");
  }
  const uint64_t step_tokens =
      token_steps
          ? loader.tokens_per_step / std::max<uint32_t>(loader.world_size, 1) + microbatch_budget
          : loader.batch_size * loader.seq_len;
  if (step_tokens >= (uint64_t{1} << kPieceBits)) {
    return InvalidArgument(token_steps ? "stream: tokens_per_step / world_size must be below 2^28"
                                       : "stream: batch_size * seq_len must be below 2^28");
  }
  std::shared_ptr<StreamPlanner> p(new StreamPlanner());
  p->options_ = options;
  auto ctx = std::make_shared<StreamContext>();
  StreamConfig& c = ctx->config;
  c.seq_len = loader.seq_len;
  c.shuffle_buffer = options.shuffle_buffer;
  c.seed = loader.seed;
  c.world_size = loader.world_size;
  c.rank = loader.rank;
  c.pack = loader.pack;
  c.bestfit_window = loader.bestfit_window;
  c.pad_each_document_to = loader.pad_each_document_to > 1 ? loader.pad_each_document_to : 0;
  c.max_documents_per_row = loader.max_documents_per_row;
  c.reader.encoder.text_field = options.text_field;
  c.reader.encoder.utf8 = options.utf8;
  c.reader.encoder.skip_bad_lines = loader.on_error == ErrorPolicy::kSkip;
  c.reader.encoder.skip_hint = kStreamSkipHint;
  c.reader.skip_corrupt_shards = loader.on_error == ErrorPolicy::kSkip;
  STOKER_ASSIGN_OR_RETURN(c.reader.chat, OpenStreamChat(options, loader));
  // A conversation is never split across rows (docs/chat.md, "Long conversations") unless
  // long_documents="split" says so; text is split unless "drop" says otherwise.
  if (ResolveLongDocuments(loader.long_documents, c.reader.chat != nullptr) ==
      LongDocuments::kDrop) {
    c.drop_longer_than = token_steps ? microbatch_budget : loader.seq_len;
  }
  if (!token_steps) {  // steps counted in tokens place whole documents (pieces only of long ones)
    STOKER_RETURN_IF_ERROR(
        CheckChatPacking(c.reader.chat != nullptr, loader.pack, loader.long_documents)
            .WithContext("stream"));
  }
  const int workers = loader.num_workers > 0 ? loader.num_workers : DefaultThreadsPerRank();
  ctx->pool =
      std::make_shared<EncodePool>(options.encode_threads > 0 ? options.encode_threads : workers);
  ctx->tokenizer = options.tokenizer_instance;
  if (!ctx->tokenizer) {
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tok,
                            OpenTokenizer(options.tokenizer, options.tokenizer_options));
    ctx->tokenizer = std::move(tok);
  }
  STOKER_ASSIGN_OR_RETURN(
      ctx->shards,
      p->ExpandShards(uint64_t{loader.world_size} * std::max<uint64_t>(options.split_factor, 1)));
  p->ctx_ = ctx;
  p->batch_size_ = token_steps ? 1 : loader.batch_size;
  p->loader_batch_size_ = loader.batch_size;
  // Steps counted in tokens: rows_consumed = step · 2^16 + microbatch.
  p->global_rows_ = token_steps ? (uint64_t{1} << 16) : loader.batch_size * loader.world_size;
  // Steps kept behind the newest: every step in flight is within one ring of it (the ring holds
  // prefetch_factor * workers + 1 slots); twice that, and at least 32.
  p->retention_ = std::max<uint64_t>(32, 2 * (uint64_t(loader.prefetch_factor) * workers + 1));
  p->fingerprint_ = p->FingerprintFor(ctx->shards, c.world_size, loader.batch_size);
  p->options_text_ = p->OptionsText(c.world_size, loader.batch_size);
  if (options.steps_per_epoch == 0) STOKER_RETURN_IF_ERROR(p->PreScan());
  if (token_steps) {
    STOKER_ASSIGN_OR_RETURN(PlanOptions plan, WithModelCost(PlanOptionsFor(loader)));
    STOKER_ASSIGN_OR_RETURN(p->token_steps_, StreamTokenSteps::Create(ctx, plan));
    p->fingerprint_ = p->FingerprintFor(ctx->shards, c.world_size, loader.batch_size);
    p->options_text_ = p->OptionsText(c.world_size, loader.batch_size);
    STOKER_ASSIGN_OR_RETURN(std::shared_ptr<const StreamTokenSteps::EpochPlan> first,
                            p->token_steps_->Epoch(0));
    if (first->steps() == 0) {
      return InvalidArgument(
          "stream: the input yields no full step of tokens_per_step / "
          "world_size = " +
          std::to_string((loader.tokens_per_step + c.world_size - 1) / c.world_size) +
          " tokens on every one of " + std::to_string(c.world_size) +
          " ranks: lower tokens_per_step");
    }
  }
  if (p->steps_per_epoch(0) == 0) {
    return InvalidArgument("stream: the input yields no full batch of " +
                           std::to_string(loader.batch_size) + " rows of " +
                           std::to_string(loader.seq_len) + " tokens on every one of " +
                           std::to_string(loader.world_size) + " ranks");
  }
  p->reader_ = std::make_shared<StreamPieceReader>(p.get());
  return p;
}

std::string StreamPlanner::FingerprintFor(const std::vector<StreamShard>& shards,
                                          uint32_t world_size, uint64_t batch_size) const {
  // Shards, tokenizer and every option that changes the row stream.
  const StreamConfig& c = ctx_->config;
  std::string key;
  for (const StreamShard& s : shards) {
    key += s.path + '\0' + std::to_string(s.begin) + ',' + std::to_string(s.end) + ';';
  }
  key += ctx_->tokenizer->identity().kind + ctx_->tokenizer->identity().checksum;
  for (uint64_t v : {c.seq_len, c.shuffle_buffer, c.seed, uint64_t{world_size}, uint64_t(c.pack),
                     c.bestfit_window, batch_size, options_.steps_per_epoch}) {
    key += ',' + std::to_string(v);
  }
  key += options_.text_field;
  if (c.reader.chat) key += "|" + c.reader.chat->identity();
  if (c.drop_longer_than > 0) key += "|drop=" + std::to_string(c.drop_longer_than);
  if (c.pad_each_document_to > 1) key += "|pad=" + std::to_string(c.pad_each_document_to);
  if (c.max_documents_per_row > 0) key += "|maxdocs=" + std::to_string(c.max_documents_per_row);
  // The deal: whole shards by bytes without a pre-scan, else documents by weight (deal.h, "2").
  key += options_.steps_per_epoch > 0 ? "|deal=bytes" : "|deal=2";
  if (token_steps_) key += "|" + token_steps_->options_text();
  return "stream-" + Xxh3Hex(Xxh3(key.data(), key.size()));
}

std::string StreamPlanner::OptionsText(uint32_t world_size, uint64_t batch_size) const {
  const StreamConfig& c = ctx_->config;
  const TokenizerIdentity& t = ctx_->tokenizer->identity();
  PlanOptions plan;  // the loader's options the stream deals by, as its rows write them
  plan.seq_len = c.seq_len;
  plan.seed = c.seed;
  plan.pack = c.pack;
  plan.bestfit_window = c.bestfit_window;
  plan.batch_size = batch_size;
  plan.world_size = world_size;
  plan.pad_each_document_to = c.pad_each_document_to;
  plan.max_documents_per_row = c.max_documents_per_row;
  std::vector<std::string_view> names = {"seq_len",        "seed",       "pack",
                                         "bestfit_window", "batch_size", "world_size"};
  if (c.pad_each_document_to > 1) names.push_back("pad_each_document_to");
  if (c.max_documents_per_row > 0) names.push_back("max_documents_per_row");
  std::string text =
      stoker::OptionsText(PlanOptionTable(), plan, names) + " " +
      stoker::OptionsText(StreamOptionTable(), options_) + " tokenizer=" + t.kind + ":" +
      t.checksum.substr(0, 16) + " drop_longer_than=" + std::to_string(c.drop_longer_than) +
      " chat=" +
      (c.reader.chat
           ? Xxh3Hex(Xxh3(c.reader.chat->identity().data(), c.reader.chat->identity().size()))
           : std::string("none"));
  // A text field may hold any character: named by its hash, like the chat template.
  const std::string& field = options_.text_field;
  text += " text_field=" + Xxh3Hex(Xxh3(field.data(), field.size()));
  return token_steps_ ? text + " " + token_steps_->options_text() : text;
}

Status StreamPlanner::PreScan() {
  PrescanOptions po;
  const std::string& dir = options_.scan_cache_dir;
  po.cache_dir = dir == "auto" ? DefaultScanCacheDir() : dir == "off" ? std::string() : dir;
  po.threads = ctx_->pool->threads();  // this rank's share of the node, as the encoders
  STOKER_ASSIGN_OR_RETURN(ShardScan scan, ScanShards(*ctx_, po, &prescan_));
  ctx_->scan = std::make_shared<const ShardScan>(std::move(scan));
  return Status::OK();
}

uint64_t StreamPlanner::FewestRows(uint64_t epoch) const {
  const StreamConfig& c = ctx_->config;
  const std::vector<std::vector<ReadUnit>> dealt =
      DealEpoch(ctx_->shards, ctx_->scan.get(), c.seed, epoch, c.world_size, c.pack);
  uint64_t rows = UINT64_MAX;
  for (uint32_t r = 0; r < c.world_size; ++r) {
    std::vector<uint32_t> stream;
    for (const ReadUnit& u : dealt[r]) AppendUnitLengths(*ctx_->scan, u, &stream);
    rows = std::min(rows, CountRows(c, MixKey(c.seed, epoch, 0x10000 + r), {}, stream));
  }
  return rows;
}

uint64_t StreamPlanner::steps_per_epoch(uint64_t epoch) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (elastic_ && elastic_->epoch == epoch) return elastic_->steps;
  if (options_.steps_per_epoch > 0) return options_.steps_per_epoch;
  auto it = steps_cache_.find(epoch);
  if (it != steps_cache_.end()) return it->second;
  uint64_t steps = 0;
  if (token_steps_) {
    Result<std::shared_ptr<const StreamTokenSteps::EpochPlan>> plan = token_steps_->Epoch(epoch);
    steps = plan.ok() ? (*plan)->steps() : 0;  // an error: no step (Create checks epoch 0)
  } else {
    steps = FewestRows(epoch) / batch_size_;
  }
  steps_cache_[epoch] = steps;
  return steps;
}

Result<uint64_t> StreamPlanner::BatchesRemaining(const PlanPosition& pos) const {
  if (token_steps_) {
    uint64_t left = 0;
    for (PlanPosition p = Normalize(pos); p.epoch == pos.epoch; p = Advance(p)) ++left;
    return left;
  }
  STOKER_ASSIGN_OR_RETURN(const uint64_t steps, StepsPerEpoch(pos.epoch));
  const uint64_t done = StepOf(pos);
  return steps > done ? steps - done : uint64_t{0};
}

Result<uint64_t> StreamPlanner::StepsPerEpoch(uint64_t epoch) const {
  if (!token_steps_) return steps_per_epoch(epoch);
  STOKER_ASSIGN_OR_RETURN(std::shared_ptr<const StreamTokenSteps::EpochPlan> plan,
                          token_steps_->Epoch(epoch));
  uint64_t batches = 0;
  for (uint32_t m : plan->microbatches) batches += m;
  return batches;
}

PlanPosition StreamPlanner::Normalize(const PlanPosition& pos) const {
  PlanPosition p = pos;
  for (int i = 0; i < 16 && StepOf(p) >= steps_per_epoch(p.epoch); ++i) p = {p.epoch + 1, 0};
  return p;
}

PlanPosition StreamPlanner::Advance(const PlanPosition& pos) const {
  if (token_steps_) {  // the next microbatch of the step, else the next step
    Result<std::shared_ptr<const StreamTokenSteps::EpochPlan>> plan =
        token_steps_->Epoch(pos.epoch);
    const uint64_t m = pos.rows_consumed % global_rows_ + 1;
    if (plan.ok() && StepOf(pos) < (*plan)->steps() && m < (*plan)->microbatches[StepOf(pos)]) {
      return {pos.epoch, pos.rows_consumed + 1};
    }
  }
  const uint64_t step = StepOf(pos) + 1;
  if (step >= steps_per_epoch(pos.epoch)) return Normalize({pos.epoch + 1, 0});
  return {pos.epoch, step * global_rows_};
}

Result<const StreamPlanner::Entry*> StreamPlanner::EntryLocked(uint64_t epoch,
                                                               uint64_t step) const {
  auto found = entries_.find({epoch, step});
  if (found != entries_.end()) return &found->second;
  Generator& g = gens_[epoch];
  if (g.stream && step < g.next_step && step != 0) {
    return FailedPrecondition("stream: step " + std::to_string(step) + " of epoch " +
                              std::to_string(epoch) +
                              " is behind the stream and no longer cached (restore a state)");
  }
  if (!g.stream || step < g.next_step) {  // an epoch's start: a fresh stream
    g.stream = std::make_unique<RankStream>(ctx_, epoch);
    if (elastic_ && elastic_->epoch == epoch) elastic_.reset();  // a fresh start of that epoch
    g.next_step = 0;
  }
  const Entry* last = nullptr;
  while (g.next_step <= step) {
    Entry e;
    e.id = next_id_++;
    e.state_before = g.stream->Snapshot().Encode();
    std::vector<PackedRow> rows;
    if (token_steps_) {  // the step's microbatches, one row each
      STOKER_ASSIGN_OR_RETURN(StreamTokenSteps::Step st,
                              token_steps_->Next(g.stream.get(), epoch, g.next_step));
      rows = std::move(st.microbatches);
      e.figures = st.figures;
    } else {
      for (uint64_t r = 0; r < batch_size_; ++r) {
        STOKER_ASSIGN_OR_RETURN(PackedRow row, g.stream->NextRow());
        rows.push_back(std::move(row));
      }
    }
    for (PackedRow& row : rows) {
      Row plan_row;
      for (const PackedPiece& piece : row) {
        const uint64_t handle = (e.id << kPieceBits) | e.pieces.size();
        e.pieces.push_back(piece.tokens);
        e.spans.push_back(piece.spans);
        plan_row.pieces.push_back({0, handle, piece.offset, piece.length});
      }
      e.rows.push_back(std::move(row));
      e.plan_rows.push_back(std::move(plan_row));
    }
    auto [it, inserted] = entries_.insert_or_assign({epoch, g.next_step}, std::move(e));
    {
      std::unique_lock<std::shared_mutex> lock(pieces_mu_);
      by_id_[it->second.id] = &it->second;
      // Evict the steps generated long before this one (whatever their epoch).
      const uint64_t newest = it->second.id;
      for (auto old = entries_.begin(); old != entries_.end();) {
        if (old->second.id + retention_ < newest) {
          by_id_.erase(old->second.id);
          old = entries_.erase(old);
        } else {
          ++old;
        }
      }
    }
    last = &it->second;
    ++g.next_step;
  }
  while (!gens_.empty() && gens_.begin()->first + 1 < epoch) gens_.erase(gens_.begin());
  return last;
}

std::shared_ptr<const std::vector<StreamShard>> StreamPlanner::ShardsOf(
    uint64_t stream_epoch) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (elastic_ && elastic_->epoch == stream_epoch) {
    return std::shared_ptr<const std::vector<StreamShard>>(elastic_, &elastic_->shards);
  }
  return std::shared_ptr<const std::vector<StreamShard>>(ctx_, &ctx_->shards);
}

Tokens StreamPlanner::PieceOf(uint64_t doc, std::vector<Tokens> Entry::*field) const {
  std::shared_lock<std::shared_mutex> lock(pieces_mu_);
  auto it = by_id_.find(doc >> kPieceBits);
  if (it == by_id_.end()) return nullptr;
  const uint64_t i = doc & ((uint64_t{1} << kPieceBits) - 1);
  const std::vector<Tokens>& pieces = it->second->*field;
  return i < pieces.size() ? pieces[i] : nullptr;
}

Status StreamPlanner::BatchAt(const PlanPosition& pos, Batch* out) const {
  const uint64_t step = StepOf(pos);
  const uint64_t microbatch = pos.rows_consumed % global_rows_;
  if ((!token_steps_ && microbatch != 0) || step >= steps_per_epoch(pos.epoch)) {
    return OutOfRange("stream: no step at epoch " + std::to_string(pos.epoch) + " row " +
                      std::to_string(pos.rows_consumed));
  }
  std::lock_guard<std::mutex> lock(mu_);
  STOKER_ASSIGN_OR_RETURN(const Entry* e, EntryLocked(pos.epoch, step));
  out->position = pos;
  out->step = step;
  out->rank = ctx_->config.rank;
  if (!token_steps_) {
    out->rows = e->plan_rows;
    return Status::OK();
  }
  if (microbatch >= e->plan_rows.size()) {
    return OutOfRange("stream: no microbatch " + std::to_string(microbatch) + " in step " +
                      std::to_string(step) + " of epoch " + std::to_string(pos.epoch));
  }
  out->rows.assign(1, e->plan_rows[microbatch]);
  out->figures = e->figures;
  out->figures->microbatch = static_cast<uint32_t>(microbatch);
  return Status::OK();
}

Result<std::vector<PackedRow>> StreamPlanner::RowsAt(const PlanPosition& pos) const {
  std::lock_guard<std::mutex> lock(mu_);
  STOKER_ASSIGN_OR_RETURN(const Entry* e, EntryLocked(pos.epoch, StepOf(pos)));
  return e->rows;
}

PlanState StreamPlanner::BaseState(const PlanPosition& pos) const {
  PlanState s;
  s.position = pos;
  s.fingerprint = fingerprint_;
  s.world_size = ctx_->config.world_size;
  s.batch_size = batch_size_;
  s.options = options_text_;
  return s;
}

PlanState StreamPlanner::MakeState(const PlanPosition& pos) const {
  PlanState s = BaseState(pos);
  const uint64_t step = StepOf(pos);
  if (step == 0) return s;  // an epoch's start: nothing to record
  std::lock_guard<std::mutex> lock(mu_);
  Result<const Entry*> e = EntryLocked(pos.epoch, step);
  if (e.ok()) {
    s.stream = elastic_ && elastic_->epoch == pos.epoch
                   ? EncodeElasticHeader(*elastic_) + (*e)->state_before
                   : (*e)->state_before;
  }
  return s;
}

Result<PlanPosition> StreamPlanner::RestorePosition(const PlanState& state) const {
  if (state.fingerprint != fingerprint_) {
    const std::string differ = plan::OptionsThatDiffer(state.options, options_text_);
    return FailedPrecondition("stream: the state belongs to another stream (fingerprint " +
                              state.fingerprint + ", this stream " + fingerprint_ + "; " +
                              (!differ.empty() ? differ + " differ"
                               : !state.options.empty()
                                   ? std::string("the inputs differ: other files or shards")
                                   : std::string("inputs, tokenizer, seed, seq_len, pack, "
                                                 "shuffle_buffer, batch_size and world_size "
                                                 "must match")) +
                              ")");
  }
  const PlanPosition pos = state.position;
  const uint64_t step = StepOf(pos);
  if (!token_steps_ && pos.rows_consumed % global_rows_ != 0) {
    return InvalidArgument("stream: the state is not at a step boundary");
  }
  std::lock_guard<std::mutex> lock(mu_);
  {
    std::unique_lock<std::shared_mutex> plock(pieces_mu_);
    entries_.clear();
    by_id_.clear();
  }
  gens_.clear();
  elastic_.reset();
  std::string_view rank_state = state.stream;
  if (step > 0 && IsElasticState(rank_state)) {
    STOKER_ASSIGN_OR_RETURN(ElasticEpoch e, DecodeElasticHeader(&rank_state));
    if (e.epoch != pos.epoch) return InvalidArgument("stream: elastic state of another epoch");
    STOKER_ASSIGN_OR_RETURN(e.shards, ExpandShards(uint64_t{e.shard_world} *
                                                   std::max<uint64_t>(options_.split_factor, 1)));
    elastic_ = std::make_shared<const ElasticEpoch>(std::move(e));
  }
  Generator& g = gens_[pos.epoch];
  g.stream = std::make_unique<RankStream>(ctx_, pos.epoch, elastic_);
  g.next_step = step;
  if (step > 0) {
    if (rank_state.empty()) return InvalidArgument("stream: the state has no stream section");
    STOKER_ASSIGN_OR_RETURN(RankSnapshot snap, RankSnapshot::Decode(rank_state));
    STOKER_RETURN_IF_ERROR(g.stream->Restore(snap));
  }
  return pos;
}

Result<std::vector<StreamShard>> StreamPlanner::ExpandShards(uint64_t min_shards) const {
  STOKER_ASSIGN_OR_RETURN(std::vector<StreamShard> shards, MakeShards(options_.inputs, min_shards));
  for (const StreamShard& s : shards) {
    if (s.records) storage_.Add(s.record.store.metrics());
  }
  return shards;
}

}  // namespace stoker::stream

namespace stoker {

Result<std::shared_ptr<const BatchPlanner>> OpenStreamPlanner(const StreamOptions& options,
                                                              const LoaderOptions& loader) {
  STOKER_ASSIGN_OR_RETURN(std::shared_ptr<stream::StreamPlanner> planner,
                          stream::StreamPlanner::Create(options, loader));
  return std::shared_ptr<const BatchPlanner>(std::move(planner));
}

Result<std::unique_ptr<Loader>> OpenStreamLoader(const StreamOptions& options,
                                                 const LoaderOptions& loader,
                                                 const PlanState* resume, StreamScanSummary* scan) {
  STOKER_RETURN_IF_ERROR(ValidateLoaderOptions(loader));  // before the pre-scan
  STOKER_ASSIGN_OR_RETURN(std::shared_ptr<stream::StreamPlanner> planner,
                          stream::StreamPlanner::Create(options, loader));
  if (scan != nullptr) {
    scan->files = planner->prescan_summary().files;
    scan->files_from_scan = planner->prescan_summary().files_from_cache;
  }
  std::vector<std::shared_ptr<const DocumentReader>> readers{planner->reader()};
  LoaderOptions engine = loader;
  if (planner->token_steps() != nullptr) {  // every batch is one microbatch of the budget
    engine.seq_len = planner->token_steps()->budget();
    engine.batch_size = 1;
  }
  return Loader::OpenWithPlanner(std::move(planner), std::move(readers), engine, resume);
}

}  // namespace stoker
