// RankStream: one rank's packed rows for one epoch, read online: the rank's dealt shards in
// order -> shuffle buffer -> pack (concat, bestfit over a window of documents, or pad). When its
// epoch's stream runs out it continues into the stream of the next epoch (those documents are then
// seen twice: see docs/streaming.md, "Epoch ends"). Its state is a few integers plus document
// references (RankSnapshot), never text. Not thread-safe: one user at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stoker/plan.h"
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
  uint64_t bestfit_window = 256;  // documents per best-fit window
  ReaderOptions reader;
};

// Shared, immutable inputs of every RankStream of a stream.
struct StreamContext {
  StreamConfig config;
  std::vector<StreamShard> shards;
  std::shared_ptr<const Tokenizer> tokenizer;
  // Decodes and tokenizes for every RankStream (thread-safe); null: on the caller's thread.
  std::shared_ptr<EncodePool> pool;
};

struct PackedPiece {
  DocRef ref;
  uint64_t stream_epoch = 0;  // the epoch whose shard dealing the document came from
  Tokens tokens;              // the whole document
  uint64_t offset = 0, length = 0;
};
using PackedRow = std::vector<PackedPiece>;

// The state between two rows.
struct RankSnapshot {
  uint64_t stream_epoch = 0;
  uint64_t shard_pos = 0;  // index into the rank's dealt shards
  bool reader_open = false;
  uint64_t next_record = 0, next_offset = 0;
  uint64_t rng = 0;
  std::vector<DocRef> buffer;
  std::vector<DocRef> group;        // the packer's documents (concat leftover, bestfit window)
  std::vector<uint64_t> group_epochs;
  uint64_t cursor = 0;              // concat: tokens of group[0] used; bestfit: rows emitted

  std::string Encode() const;  // space-separated integers
  static Result<RankSnapshot> Decode(std::string_view text);
};

class RankStream {
 public:
  // A fresh stream at the start of `epoch`.
  RankStream(std::shared_ptr<const StreamContext> ctx, uint64_t epoch);

  Result<PackedRow> NextRow();
  RankSnapshot Snapshot() const;
  // Replaces the state (re-reads the referenced documents).
  Status Restore(const RankSnapshot& snap);

  const PackCounters& counters() const { return docs_.counters(); }

 private:
  struct Doc {
    DocRef ref;
    uint64_t stream_epoch = 0;
    Tokens tokens;
  };
  void StartStreamEpoch(uint64_t e);
  Result<bool> ReadOne(Doc* out);
  Result<Doc> NextDoc();
  Status LoadBestFitWindow();
  void PackWindow();  // group_ -> window_rows_
  Status Reread(const std::vector<DocRef>& refs, const std::vector<uint64_t>& epochs,
                std::vector<Doc>* out);

  std::shared_ptr<const StreamContext> ctx_;
  uint64_t stream_epoch_ = 0;
  std::vector<uint32_t> dealt_;
  DocPipeline docs_;  // after dealt_: reads it
  bool input_done_ = false;
  uint64_t rng_ = 0;
  std::vector<Doc> buffer_;
  std::vector<Doc> group_;
  uint64_t cursor_ = 0;
  std::vector<PackedRow> window_rows_;  // bestfit: the current window's rows
};

}  // namespace stoker::stream
