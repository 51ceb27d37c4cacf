// Test doubles for the loader tests: random in-memory datasets, a forwarding TokenSource to build
// wrappers on and a fault-injecting one, a chat source with a loss mask, a scripted planner (concat
// packing of a per-epoch shuffle, planned by hand), and batch readers.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "loader/memory_token_source.h"
#include "stoker/loader.h"
#include "stoker/planner.h"

namespace stoker::loader::testing {

// Chat data (docs/chat.md, "Batches"): documents in memory with a loss mask, one byte per token.
class MaskedSource final : public MemoryTokenSource {
 public:
  MaskedSource(std::vector<std::vector<int64_t>> docs, std::vector<std::vector<uint8_t>> masks)
      : MemoryTokenSource("chat", std::move(docs)), masks_(std::move(masks)) {}
  bool has_loss_mask() const override { return true; }
  Status ReadLossMask(uint64_t doc, uint64_t offset, uint64_t count, uint8_t* out) const override {
    if (offset + count > masks_[doc].size()) return OutOfRange("mask read past the end");
    std::copy_n(masks_[doc].begin() + offset, count, out);
    return Status::OK();
  }

 private:
  std::vector<std::vector<uint8_t>> masks_;
};

// `n` documents of 1..max_len tokens with ids in [1, 30000), from `seed`.
inline std::shared_ptr<MemoryTokenSource> RandomSource(uint64_t seed, int n, int max_len,
                                                       std::string name = "mem") {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<int64_t>> docs(n);
  for (auto& d : docs) {
    d.resize(1 + rng() % max_len);
    for (auto& t : d) t = 1 + static_cast<int64_t>(rng() % 29999);
  }
  return std::make_shared<MemoryTokenSource>(std::move(name), std::move(docs));
}

// Forwards every call to `inner`, so that a test double overrides only what it changes (as
// LevelDB's EnvWrapper does). Thread-safe if `inner` is.
class ForwardingTokenSource : public TokenSource {
 public:
  explicit ForwardingTokenSource(std::shared_ptr<const TokenSource> inner)
      : inner_(std::move(inner)) {}
  std::string_view format() const override { return inner_->format(); }
  const std::string& path() const override { return inner_->path(); }
  TokenDType dtype() const override { return inner_->dtype(); }
  uint64_t num_documents() const override { return inner_->num_documents(); }
  uint64_t num_tokens() const override { return inner_->num_tokens(); }
  uint64_t document_length(uint64_t doc) const override { return inner_->document_length(doc); }
  void DocumentLengths(uint64_t first, uint64_t count, uint64_t* out) const override {
    inner_->DocumentLengths(first, count, out);
  }
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const override {
    return inner_->Read(doc, offset, count, out);
  }
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const override {
    return inner_->Read(doc, offset, count, out);
  }
  void PrefetchIndex(uint64_t doc) const override { inner_->PrefetchIndex(doc); }
  void PrefetchTokens(uint64_t doc, uint64_t offset) const override {
    inner_->PrefetchTokens(doc, offset);
  }
  uint64_t num_shards() const override { return inner_->num_shards(); }
  uint64_t shard_first_document(uint64_t shard) const override {
    return inner_->shard_first_document(shard);
  }

 private:
  std::shared_ptr<const TokenSource> inner_;
};

// Forwards to `inner`, failing every read of `bad_document` with kIOError, and (if fail_nth > 0)
// the fail_nth-th read overall. Thread-safe.
class FaultyTokenSource : public ForwardingTokenSource {
 public:
  FaultyTokenSource(std::shared_ptr<const TokenSource> inner, int64_t bad_document,
                    int64_t fail_nth = 0)
      : ForwardingTokenSource(std::move(inner)), bad_(bad_document), fail_nth_(fail_nth) {}
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const override {
    STOKER_RETURN_IF_ERROR(Fault(doc));
    return ForwardingTokenSource::Read(doc, offset, count, out);
  }
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const override {
    STOKER_RETURN_IF_ERROR(Fault(doc));
    return ForwardingTokenSource::Read(doc, offset, count, out);
  }
  int64_t reads() const { return reads_; }

 private:
  Status Fault(uint64_t doc) const {
    int64_t n = ++reads_;
    if (static_cast<int64_t>(doc) == bad_) return IOError("injected read error");
    if (fail_nth_ > 0 && n == fail_nth_) return IOError("injected read error (nth)");
    return Status::OK();
  }
  int64_t bad_;
  int64_t fail_nth_;
  mutable std::atomic<int64_t> reads_{0};
};

// Per epoch: documents of dataset 0 in an order shuffled by (seed, epoch), concatenated and cut
// into rows of seq_len (documents split across rows); the last partial row is padding; steps =
// rows / batch_size (drop_last). Thread-safe.
class ScriptedPlanner final : public BatchPlanner {
 public:
  ScriptedPlanner(std::shared_ptr<const TokenSource> src, uint64_t seq_len, uint64_t batch_size,
                  uint64_t seed, int epochs_cached = 4)
      : batch_size_(batch_size) {
    for (int e = 0; e < epochs_cached; ++e) epochs_.push_back(Pack(*src, seq_len, seed, e));
  }
  uint64_t steps(uint64_t epoch) const { return rows(epoch).size() / batch_size_; }
  const std::vector<Row>& rows(uint64_t epoch) const { return epochs_[epoch % epochs_.size()]; }

  PlanPosition Normalize(const PlanPosition& pos) const override {
    return pos.rows_consumed / batch_size_ >= steps(pos.epoch) ? PlanPosition{pos.epoch + 1, 0}
                                                               : pos;
  }
  PlanPosition Advance(const PlanPosition& pos) const override {
    return Normalize({pos.epoch, pos.rows_consumed + batch_size_});
  }
  Status BatchAt(const PlanPosition& pos, Batch* out) const override {
    out->position = pos;
    out->step = pos.rows_consumed / batch_size_;
    const auto& r = rows(pos.epoch);
    out->rows.assign(r.begin() + pos.rows_consumed, r.begin() + pos.rows_consumed + batch_size_);
    return Status::OK();
  }
  PlanState MakeState(const PlanPosition& pos) const override {
    PlanState s;
    s.position = pos;
    s.fingerprint = "scripted";
    return s;
  }

 private:
  static std::vector<Row> Pack(const TokenSource& src, uint64_t S, uint64_t seed, uint64_t epoch) {
    std::vector<uint64_t> order(src.num_documents());
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(seed * 1000003 + epoch);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<Row> rows(1);
    uint64_t used = 0;
    for (uint64_t doc : order) {
      uint64_t len = src.document_length(doc), off = 0;
      while (off < len) {
        if (used == S) {
          rows.emplace_back();
          used = 0;
        }
        uint64_t n = std::min(len - off, S - used);
        rows.back().pieces.push_back({0, doc, off, n});
        off += n;
        used += n;
      }
    }
    return rows;
  }
  uint64_t batch_size_;
  std::vector<std::vector<Row>> epochs_;
};

// Host tensor contents as int64, whatever the token dtype.
inline std::vector<int64_t> ToVector(const TensorView& v) {
  if (v.data == nullptr) return {};  // a tensor the batch does not build
  int64_t n = 1;
  for (int i = 0; i < v.ndim; ++i) n *= v.shape[i];
  std::vector<int64_t> out(n);
  for (int64_t i = 0; i < n; ++i) {
    switch (v.dtype) {
      case TokenDType::kInt32:
        out[i] = static_cast<const int32_t*>(v.data)[i];
        break;
      case TokenDType::kInt64:
        out[i] = static_cast<const int64_t*>(v.data)[i];
        break;
      default:
        out[i] = static_cast<const uint8_t*>(v.data)[i];
        break;
    }
  }
  return out;
}

// Everything a batch holds, flattened, for equality checks.
struct BatchDump {
  uint64_t epoch, step;
  std::vector<int64_t> ids, labels, pos, seg, cu;
  int max_seqlen;
  bool operator==(const BatchDump&) const = default;
};

inline BatchDump Dump(const LoaderBatch& b) {
  return {b.epoch(),
          b.step(),
          ToVector(b.input_ids()),
          ToVector(b.labels()),
          ToVector(b.position_ids()),
          ToVector(b.segment_ids()),
          ToVector(b.cu_seqlens()),
          b.max_seqlen()};
}

}  // namespace stoker::loader::testing
