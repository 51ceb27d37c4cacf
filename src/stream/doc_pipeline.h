// DocPipeline: one rank's documents in the order of its dealt shards, read on the caller's thread
// and decoded + tokenized on the stream's EncodePool. Records are read in chunks; each chunk is
// encoded by one pool task, and chunks are handed out strictly in read order, so the documents
// (and every skip, count and error) are the same for any pool size. Up to `depth` chunks are read
// ahead. A read or encode error comes back at the document where it happened, and stays.
// Not thread-safe: one user at a time (its pool tasks synchronise with it internally).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "common/thread_annotations.h"
#include "stream/encode_pool.h"
#include "stream/shard_reader.h"

namespace stoker::stream {

using Tokens = std::shared_ptr<const std::vector<int32_t>>;

// One entry of a rank's reading order: shard `shard` read from record `record` at byte `offset`
// (0, 0: from its start) up to (not including) record `end_record`; `docs` documents of the shard
// come before that point and `end_docs` before the end (so the pre-scan's lengths of the unit are
// lengths[shard][docs, end_docs)). kNoEnd: to the shard's end. An epoch's deal (deal.h) cuts
// shards at documents, so a unit may start and end inside a shard.
struct ReadUnit {
  static constexpr uint64_t kNoEnd = UINT64_MAX;
  uint32_t shard = 0;
  uint64_t record = 0, offset = 0, docs = 0;
  uint64_t end_record = kNoEnd, end_docs = kNoEnd;
  bool operator==(const ReadUnit&) const = default;
};
std::vector<ReadUnit> WholeShards(const std::vector<uint32_t>& shards);

// Where the next document is read from: the index into the dealt units and, if that unit's shard
// is open, the next record and its byte offset; `docs`: documents of that shard handed out so far
// (counting those before the unit's start).
struct StreamPosition {
  uint64_t shard_pos = 0;
  bool reader_open = false;
  uint64_t next_record = 0, next_offset = 0;
  uint64_t docs = 0;
};

struct PipelineDoc {
  DocRef ref;
  Tokens tokens;
  Tokens spans;  // chat data: the loss mask's spans (format/loss_mask.h); null for text
};

class DocPipeline {
 public:
  // `shards`, `tokenizer` and `pool` (null: encode on the caller's thread) outlive the pipeline.
  DocPipeline(const std::vector<StreamShard>* shards, const Tokenizer* tokenizer,
              const ReaderOptions& options, EncodePool* pool);
  ~DocPipeline();  // waits for its chunks still being encoded
  DocPipeline(const DocPipeline&) = delete;
  DocPipeline& operator=(const DocPipeline&) = delete;

  // Drops what was read ahead and continues from `pos` in `dealt`, whose shard indices refer to
  // `shards` (both must outlive the use).
  void Reset(const std::vector<StreamShard>* shards, const std::vector<ReadUnit>* dealt,
             const StreamPosition& pos);
  // The next document that yields tokens, or false once the dealt shards are exhausted.
  Result<bool> Next(PipelineDoc* out);
  // The position after the last document Next returned (or the Reset position).
  const StreamPosition& position() const { return pos_; }
  const PackCounters& counters() const { return counters_; }

 private:
  struct Chunk {
    std::vector<RawItem> items;
    std::vector<StreamPosition> after;  // the position after each item
    Status read_error;                  // after the items: the shard could not be read further
    // Written by the encoding task, read once done (under the pipeline's mutex).
    std::vector<Tokens> tokens;  // per item; null: skipped
    std::vector<Tokens> spans;   // per item, chat data only
    Status encode_error;
    size_t error_at = SIZE_MAX;  // the item that failed to encode (items.size(): none)
    PackCounters counters;
    bool done = false;
  };
  void Fill();  // reads chunks until `depth` are queued (or the input ends)
  void ReadChunk(Chunk* c);
  void Encode(Chunk* c) const;
  void WaitIdle();

  ShardReader reader_;
  EncodePool* pool_;
  size_t depth_;
  const std::vector<ReadUnit>* dealt_ = nullptr;
  StreamPosition read_pos_;  // where the reader is (open or about to open)
  bool opened_ = false;      // reader_ is open on read_pos_'s shard
  bool read_done_ = false;
  StreamPosition pos_;  // after the last document handed out
  std::deque<std::shared_ptr<Chunk>> chunks_;
  size_t front_item_ = 0;  // next item of chunks_.front()
  Status failed_;
  PackCounters counters_;

  std::mutex mu_;
  std::condition_variable cv_;
  int in_flight_ STOKER_GUARDED_BY(mu_) = 0;
};

}  // namespace stoker::stream
