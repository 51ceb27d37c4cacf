// RankStream: one rank's packed rows for one epoch, read online: the rank's dealt shards in
// order -> shuffle buffer -> pack (concat, bestfit over a window of documents, or pad). When its
// epoch's stream runs out it continues into the stream of the next epoch (those documents are then
// seen twice: see docs/streaming.md, "Equal steps"). Its state is a few integers plus document
// references (RankSnapshot), never text. Not thread-safe: one user at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/plan.h"
#include "stream/deal.h"
#include "stream/doc_pipeline.h"
#include "stream/encode_pool.h"
#include "text/tokenizer.h"

namespace stoker::stream {

struct StreamConfig {
  uint64_t seq_len = 2048;
  uint64_t shuffle_buffer = 10000;  // documents; 0 or 1 = no shuffle buffer
  uint64_t seed = 0;
  uint32_t world_size = 1;
  uint32_t rank = 0;
  PackMode pack = PackMode::kConcat;
  uint64_t bestfit_window = PlanOptions{}.bestfit_window;  // documents per best-fit window
  // Documents longer than this many tokens are left out (chat data: seq_len, docs/chat.md); 0:
  // none (long documents are split).
  uint64_t drop_longer_than = 0;
  // The loader's pad_each_document_to (> 1: each piece takes its padded room in a row, as the
  // plan packs it; seq_len is a multiple of it) and max_documents_per_row (> 0: a best-fit row
  // takes at most this many pieces). Pack bestfit or pad only (plan::CheckDocumentPadding).
  uint64_t pad_each_document_to = 0;
  uint64_t max_documents_per_row = 0;
  ReaderOptions reader;
};

// Shared, immutable inputs of every RankStream of a stream.
struct StreamContext {
  StreamConfig config;
  std::vector<StreamShard> shards;
  std::shared_ptr<const Tokenizer> tokenizer;
  // Decodes and tokenizes for every RankStream (thread-safe); null: on the caller's thread.
  std::shared_ptr<EncodePool> pool;
  // The pre-scan of `shards`, by which each epoch is dealt (deal.h); null: none (whole shards
  // dealt by bytes).
  std::shared_ptr<const ShardScan> scan;
};

struct PackedPiece {
  DocRef ref;
  uint64_t stream_epoch = 0;  // the epoch whose shard dealing the document came from
  Tokens tokens;              // the whole document
  Tokens spans;               // chat data: its loss mask's spans; null for text
  uint64_t offset = 0, length = 0;
};
using PackedRow = std::vector<PackedPiece>;

// The rest of one epoch after an elastic resume (docs/streaming.md, "Elastic resume"): the shards
// of the world that started the epoch, and this rank's share of their unread work.
struct ElasticEpoch {
  uint64_t epoch = 0;
  uint32_t shard_world = 1;  // the world size whose MakeShards made `shards`
  uint64_t steps = 0;        // the epoch's steps, the same on every rank
  std::vector<StreamShard> shards;
  std::vector<ReadUnit> units;  // this rank's reading order for the rest of the epoch
};

// A document in a checkpoint: its reference, the stream epoch it came from (which says which
// shard list `ref.shard` indexes) and the token range [begin, end) still to be used.
struct DocSpan {
  DocRef ref;
  uint64_t stream_epoch = 0;
  uint64_t begin = 0, end = 0;
};

// Reads the space-separated unsigned integers of the checkpoint encodings. Plain value.
class IntReader {
 public:
  explicit IntReader(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}
  uint64_t Next();
  bool ok() const { return ok_; }
  bool AtEnd();  // after skipping blanks

 private:
  const char* p_;
  const char* end_;
  bool ok_ = true;
};

// The state between two rows.
struct RankSnapshot {
  static constexpr uint64_t kWhole = UINT64_MAX;  // version-1 states: end = the document's end
  uint64_t stream_epoch = 0;
  uint64_t shard_pos = 0;  // index into the rank's dealt units
  bool reader_open = false;
  uint64_t next_record = 0, next_offset = 0, next_docs = 0;
  uint64_t rng = 0;
  std::vector<DocSpan> buffer;
  std::vector<DocSpan> group;  // the packer's documents (concat leftover, bestfit window)
  uint64_t cursor = 0;         // concat: tokens of group[0] used (absolute); bestfit: rows emitted

  std::string Encode() const;  // space-separated integers (version 2)
  static Result<RankSnapshot> Decode(std::string_view text);  // versions 1 and 2
};

class RankStream {
 public:
  // A fresh stream at the start of `epoch`. `elastic`, if given, is read for its epoch instead of
  // that epoch's dealt shards.
  RankStream(std::shared_ptr<const StreamContext> ctx, uint64_t epoch,
             std::shared_ptr<const ElasticEpoch> elastic = nullptr);

  Result<PackedRow> NextRow();
  RankSnapshot Snapshot() const;
  // Replaces the state (re-reads the referenced documents).
  Status Restore(const RankSnapshot& snap);

 private:
  struct Doc {
    DocRef ref;
    uint64_t stream_epoch = 0;
    Tokens tokens;
    Tokens spans;                 // chat data only
    uint64_t begin = 0, end = 0;  // the token range to use (a resumed document may be partial)
  };
  const std::vector<StreamShard>& ShardsOf(uint64_t stream_epoch) const;
  void StartStreamEpoch(uint64_t e);
  Result<bool> ReadOne(Doc* out);
  Status FillBuffer();  // reads until the buffer is full or this epoch's stream is exhausted
  Result<Doc> NextDoc();
  Status LoadBestFitWindow();
  void PackWindow();  // group_ -> window_rows_
  Status Reread(const std::vector<DocSpan>& spans, std::vector<Doc>* out);

  std::shared_ptr<const StreamContext> ctx_;
  std::shared_ptr<const ElasticEpoch> elastic_;
  uint64_t stream_epoch_ = 0;
  std::vector<ReadUnit> dealt_;
  DocPipeline docs_;  // after dealt_: reads it
  bool input_done_ = false;
  uint64_t rng_ = 0;
  std::vector<Doc> buffer_;
  std::vector<Doc> group_;
  uint64_t cursor_ = 0;
  std::vector<PackedRow> window_rows_;  // bestfit: the current window's rows
};

}  // namespace stoker::stream
