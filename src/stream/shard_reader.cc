#include "stream/shard_reader.h"

#include <utility>

#include "records/byte_stream.h"
#include "storage/byte_source.h"

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
    : shards_(shards),
      tokenizer_(tokenizer),
      options_(options),
      encoder_(tokenizer, options.encoder, options.chat.get()) {}

Status ShardReader::CorruptOrFail(const Status& st) {
  if (!options_.skip_corrupt_shards) return st;
  lines_.reset();
  records_.reset();
  open_ = false;
  return Status::OK();
}

Status ShardReader::Open(uint32_t shard, uint64_t record, uint64_t offset, uint64_t end_record) {
  const StreamShard& s = (*shards_)[shard];
  shard_ = shard;
  open_ = true;
  end_record_ = end_record;
  whole_done_ = record > 0;
  next_record_ = record;
  lines_.reset();
  records_.reset();
  if (s.records) {
    next_offset_ = 0;
    InputFile f;
    f.path = s.path;
    f.size_bytes = s.end;
    f.kind = InputKind::kRecords;
    f.shard = s.record;
    Result<std::unique_ptr<RecordDocumentReader>> r =
        RecordDocumentReader::Open(f, options_.encoder.text_field, "");
    if (!r.ok()) return CorruptOrFail(r.status());
    records_ = std::move(*r);
    // Resume inside the shard: its records before `record` are read and dropped.
    RawDocument skip;
    for (uint64_t i = 0; i < record; ++i) {
      Result<bool> got = records_->Next(&skip);
      if (!got.ok()) return CorruptOrFail(got.status());
      if (!*got) {
        return Corruption(s.path + ": ends before record " + std::to_string(record) +
                          " (the file changed since the checkpoint?)");
      }
    }
    return Status::OK();
  }
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
  Result<std::unique_ptr<ByteStream>> bs = OpenAt(s, start);
  if (!bs.ok()) return CorruptOrFail(bs.status());
  lines_ = std::make_unique<LineReader>(std::move(*bs));
  base_ = start;
  next_offset_ = start;
  if (skip_partial) {
    std::string partial;
    Result<bool> got = lines_->Next(&partial);
    if (!got.ok()) return CorruptOrFail(got.status());
    next_offset_ = s.begin + partial.size();  // provisional; NextLine sets the real value
  }
  return Status::OK();
}

Result<bool> ShardReader::NextLine(std::string* line, uint64_t* offset) {
  const StreamShard& s = (*shards_)[shard_];
  Result<bool> got = lines_->Next(line);
  if (!got.ok()) {
    STOKER_RETURN_IF_ERROR(CorruptOrFail(got.status()));
    return false;
  }
  if (!*got) return false;
  *offset = base_ + lines_->line_offset_bytes();
  if (!s.compressed && *offset >= s.end) return false;
  return true;
}

Status ShardReader::EncodeItem(const RawItem& item, EncodedDocuments* scratch, bool* kept) const {
  const StreamShard& s = (*shards_)[item.ref.shard];
  scratch->tokens.clear();
  scratch->lengths.clear();
  scratch->spans.clear();
  scratch->span_lengths.clear();
  scratch->counters = PackCounters();
  Status st = encoder_.Encode(item.raw, s.path, scratch);
  if (!st.ok() && item.raw.jsonl && item.raw.line_number == 0) {
    // No line number to give: name the file and the byte offset only.
    std::string m = st.message();
    const std::string unknown = s.path + ":0";
    if (m.compare(0, unknown.size(), unknown) == 0) m.erase(s.path.size(), 2);
    return Status(st.code(), m);
  }
  STOKER_RETURN_IF_ERROR(st);
  *kept = !scratch->lengths.empty();
  return Status::OK();
}

Result<bool> ShardReader::NextRaw(RawItem* item) {
  if (!open_ || next_record_ >= end_record_) return false;
  const StreamShard& s = (*shards_)[shard_];
  RawDocument& raw = item->raw;
  if (s.records) {
    if (!records_) return false;
    Result<bool> got = records_->Next(&raw);
    if (!got.ok()) {
      STOKER_RETURN_IF_ERROR(CorruptOrFail(got.status()));
      return false;
    }
    if (!*got) {
      records_.reset();
      return false;
    }
    item->ref = {shard_, next_record_++, raw.record_offset};
    return true;
  }
  if (!s.jsonl) {
    if (whole_done_) return false;
    whole_done_ = true;
    next_record_ = 1;
    raw = RawDocument();
    Status st = ReadAllDecompressed(s.path, &raw.data);
    if (!st.ok()) {
      STOKER_RETURN_IF_ERROR(CorruptOrFail(st));
      return false;
    }
    item->ref = {shard_, 0, 0};
    return true;
  }
  if (!lines_) return false;
  uint64_t offset = 0;
  raw.record = false;
  raw.jsonl = true;
  STOKER_ASSIGN_OR_RETURN(bool got, NextLine(&raw.data, &offset));
  if (!got) {
    lines_.reset();
    return false;
  }
  const uint64_t record = next_record_++;
  next_offset_ = offset + raw.data.size() + 1;
  raw.offset_bytes = offset;
  // The 1-based line when the shard starts the file (a byte range further in knows only offsets).
  raw.line_number = s.begin == 0 ? record + 1 : 0;
  item->ref = {shard_, record, offset};
  return true;
}

Status ShardReader::ReadRefs(const std::vector<DocRef>& refs, std::vector<StreamDoc>* out) {
  if (refs.empty()) return Status::OK();
  const uint32_t shard = refs.front().shard;
  const StreamShard& s = (*shards_)[shard];
  // A whole-file document is read from the start; the others from the first wanted record.
  const bool whole = !s.jsonl && !s.records;
  const ReaderOptions saved = options_;
  options_.skip_corrupt_shards = false;  // a referenced document must be there
  Status st = whole ? Open(shard, 0, 0) : Open(shard, refs.front().record, refs.front().offset);
  RawItem item;
  for (size_t i = 0; st.ok() && i < refs.size(); ++i) {
    const DocRef& want = refs[i];
    if (i > 0 && want == refs[i - 1]) {  // the same document twice (from two epochs' streams)
      out->push_back(out->back());
      continue;
    }
    // Records between wanted ones are read and dropped (their tokens are not needed).
    bool found = false;
    for (;;) {
      Result<bool> got = NextRaw(&item);
      if (!got.ok()) {
        st = got.status();
        break;
      }
      if (!*got || item.ref.record > want.record) break;
      // Records match by index (their offset is informational: states before it was kept hold 0).
      const bool same_offset = whole || s.records || item.ref.offset == want.offset;
      if (item.ref.record == want.record && same_offset) {
        found = true;
        break;
      }
    }
    if (!st.ok()) break;
    const std::string at = s.records ? "record " + std::to_string(want.record)
                                     : "byte offset " + std::to_string(want.offset);
    if (!found) {
      st =
          Corruption(s.path + ": no record at " + at + " (the file changed since the checkpoint?)");
      break;
    }
    bool kept = false;
    st = EncodeItem(item, &scratch_, &kept);
    if (st.ok() && !kept) {
      st = Corruption(s.path + ": record at " + at + " no longer yields a document");
    }
    if (!st.ok()) break;
    StreamDoc doc;
    doc.ref = want;
    doc.tokens.assign(scratch_.tokens.begin(), scratch_.tokens.end());
    doc.spans.assign(scratch_.spans.begin(), scratch_.spans.end());
    out->push_back(std::move(doc));
  }
  options_ = saved;
  open_ = false;
  lines_.reset();
  records_.reset();
  return st;
}

}  // namespace stoker::stream
