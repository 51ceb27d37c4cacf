#include "stream/shard_reader.h"

#include <utility>

#include "storage/byte_source.h"
#include "records/byte_stream.h"

namespace stoker::stream {
namespace {

// A stream over `shard`'s file positioned at decompressed byte `offset`.
Result<std::unique_ptr<ByteStream>> OpenAt(const StreamShard& shard, uint64_t offset) {
  if (!shard.compressed) {
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> src, OpenFileSource(shard.path));
    return OpenSourceStream(std::shared_ptr<const ByteSource>(std::move(src)), Compression::kNone,
                            offset);
  }
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteStream> s, OpenByteStream(shard.path));
  std::vector<char> skip(1 << 16);
  for (uint64_t left = offset; left > 0;) {
    STOKER_ASSIGN_OR_RETURN(size_t n, s->Read(skip.data(), std::min<uint64_t>(left, skip.size())));
    if (n == 0) {
      return Corruption(shard.path + ": ends before decompressed byte offset " +
                        std::to_string(offset) + " (the file changed since the checkpoint?)");
    }
    left -= n;
  }
  return s;
}

}  // namespace

ShardReader::ShardReader(const std::vector<StreamShard>* shards, const Tokenizer* tokenizer,
                         ReaderOptions options)
    : shards_(shards), tokenizer_(tokenizer), options_(options),
      encoder_(tokenizer, options.encoder) {}

Status ShardReader::Open(uint32_t shard, uint64_t record, uint64_t offset) {
  const StreamShard& s = (*shards_)[shard];
  shard_ = shard;
  open_ = true;
  whole_done_ = record > 0;
  next_record_ = record;
  lines_.reset();
  if (!s.jsonl) {
    next_offset_ = 0;
    return Status::OK();
  }
  const bool fresh = record == 0 && offset == 0;
  uint64_t start = fresh ? s.begin : offset;
  // A range that does not start the file owns the lines that start inside it: skip the line that
  // straddles its beginning (an empty one if byte begin - 1 is '\n').
  const bool skip_partial = fresh && s.begin > 0;
  if (skip_partial) start -= 1;
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteStream> bs, OpenAt(s, start));
  lines_ = std::make_unique<LineReader>(std::move(bs));
  base_ = start;
  next_offset_ = start;
  if (skip_partial) {
    std::string partial;
    STOKER_ASSIGN_OR_RETURN(bool got, lines_->Next(&partial));
    (void)got;
    next_offset_ = s.begin + partial.size();  // provisional; NextLine sets the real value
  }
  return Status::OK();
}

Result<bool> ShardReader::NextLine(std::string* line, uint64_t* offset) {
  const StreamShard& s = (*shards_)[shard_];
  Result<bool> got = lines_->Next(line);
  if (!got.ok()) {
    if (!options_.skip_corrupt_shards) return got.status();
    ++corrupt_shards_;
    lines_.reset();
    return false;
  }
  if (!*got) return false;
  *offset = base_ + lines_->line_offset_bytes();
  if (!s.compressed && *offset >= s.end) return false;
  return true;
}

Status ShardReader::Encode(const std::string& text, uint64_t offset, uint64_t record, StreamDoc* doc,
                           bool* kept) {
  const StreamShard& s = (*shards_)[shard_];
  RawDocument raw;
  raw.data = text;
  raw.jsonl = s.jsonl;
  raw.offset_bytes = offset;
  // The 1-based line when the shard starts the file (a byte range further in knows only offsets).
  raw.line_number = s.begin == 0 ? record + 1 : 0;
  scratch_.tokens.clear();
  scratch_.lengths.clear();
  scratch_.counters = PackCounters();
  Status st = encoder_.Encode(raw, s.path, &scratch_);
  if (!st.ok() && raw.jsonl && raw.line_number == 0) {
    // No line number to give: name the file and the byte offset only.
    std::string m = st.message();
    const std::string unknown = s.path + ":0";
    if (m.compare(0, unknown.size(), unknown) == 0) m.erase(s.path.size(), 2);
    return Status(st.code(), m);
  }
  STOKER_RETURN_IF_ERROR(st);
  counters_.Add(scratch_.counters);
  *kept = !scratch_.lengths.empty();
  if (*kept) doc->tokens.assign(scratch_.tokens.begin(), scratch_.tokens.end());
  return Status::OK();
}

Result<bool> ShardReader::Next(StreamDoc* doc) {
  if (!open_) return false;
  const StreamShard& s = (*shards_)[shard_];
  if (!s.jsonl) {
    if (whole_done_) return false;
    whole_done_ = true;
    next_record_ = 1;
    std::string text;
    Status st = ReadAllDecompressed(s.path, &text);
    if (!st.ok()) {
      if (!options_.skip_corrupt_shards) return st;
      ++corrupt_shards_;
      return false;
    }
    bool kept = false;
    doc->ref = {shard_, 0, 0};
    STOKER_RETURN_IF_ERROR(Encode(text, 0, 0, doc, &kept));
    return kept;
  }
  std::string line;
  while (lines_) {
    uint64_t offset = 0;
    STOKER_ASSIGN_OR_RETURN(bool got, NextLine(&line, &offset));
    if (!got) break;
    const uint64_t record = next_record_++;
    next_offset_ = offset + line.size() + 1;
    bool kept = false;
    doc->ref = {shard_, record, offset};
    STOKER_RETURN_IF_ERROR(Encode(line, offset, record, doc, &kept));
    if (kept) return true;
  }
  lines_.reset();
  return false;
}

Status ShardReader::ReadRefs(const std::vector<DocRef>& refs, std::vector<StreamDoc>* out) {
  if (refs.empty()) return Status::OK();
  const uint32_t shard = refs.front().shard;
  STOKER_RETURN_IF_ERROR(Open(shard, refs.front().record, refs.front().offset));
  for (const DocRef& want : refs) {
    StreamDoc doc;
    if ((*shards_)[shard].jsonl) {
      // Records between wanted ones are read and dropped (their tokens are not needed).
      std::string line;
      uint64_t offset = 0;
      for (;;) {
        STOKER_ASSIGN_OR_RETURN(bool got, NextLine(&line, &offset));
        if (!got || offset > want.offset) {
          return Corruption((*shards_)[shard].path + ": no record at byte offset " +
                            std::to_string(want.offset) + " (the file changed since the checkpoint?)");
        }
        if (offset == want.offset) break;
      }
      bool kept = false;
      STOKER_RETURN_IF_ERROR(Encode(line, offset, want.record, &doc, &kept));
      if (!kept) return Corruption((*shards_)[shard].path + ": record at byte offset " +
                                   std::to_string(want.offset) + " no longer yields a document");
    } else {
      whole_done_ = false;
      STOKER_ASSIGN_OR_RETURN(bool got, Next(&doc));
      if (!got) return Corruption((*shards_)[shard].path + ": no longer yields a document");
    }
    doc.ref = want;
    out->push_back(std::move(doc));
  }
  open_ = false;
  lines_.reset();
  return Status::OK();
}

}  // namespace stoker::stream
