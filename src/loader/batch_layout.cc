#include "loader/batch_layout.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>

#include "common/clock.h"
#include "loader/context_parallel.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace stoker::loader {
namespace {

constexpr size_t kAlign = 256;
constexpr int64_t kIgnoreIndex = -100;  // torch.nn.CrossEntropyLoss's ignore_index

size_t AlignUp(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// Slot writes bypass the cache (non-temporal stores): a slot is written once, read later by
// another thread or by the GPU's DMA, and 4 x 8 bytes per token at int64 make the assembler
// memory-bound. Ordinary stores would first read every line from DRAM (read-for-ownership),
// doubling the traffic. Unaligned heads and tails use ordinary stores. Callers end a batch with
// StreamFence() so the data is visible before the slot is handed over.
template <typename T>
void StreamCopy(T* dst, const T* src, size_t n) {
#if defined(__SSE2__)
  size_t i = 0;
  for (; i < n && (reinterpret_cast<uintptr_t>(dst + i) & 15) != 0; ++i) dst[i] = src[i];
  constexpr size_t kPer = 16 / sizeof(T);
  // Four stores per iteration: the loop's own instructions (add, compare, branch) were a third of
  // the assembler's instructions with one.
#pragma GCC unroll 4
  for (; i + kPer <= n; i += kPer) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), v);
  }
  for (; i < n; ++i) dst[i] = src[i];
#else
  std::memcpy(dst, src, n * sizeof(T));
#endif
}

template <typename T>
void StreamFill(T* dst, size_t n, T value) {
#if defined(__SSE2__)
  size_t i = 0;
  for (; i < n && (reinterpret_cast<uintptr_t>(dst + i) & 15) != 0; ++i) dst[i] = value;
  const __m128i v = sizeof(T) == 8 ? _mm_set1_epi64x(static_cast<int64_t>(value))
                                   : _mm_set1_epi32(static_cast<int32_t>(value));
  constexpr size_t kPer = 16 / sizeof(T);
#pragma GCC unroll 4
  for (; i + kPer <= n; i += kPer) _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), v);
  for (; i < n; ++i) dst[i] = value;
#else
  std::fill_n(dst, n, value);
#endif
}

void StreamFence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

template <typename T>
class Assembler {
 public:
  Assembler(const AssemblyOptions& options, const BatchLayout& layout,
            const std::vector<const DocumentReader*>& sources, uint8_t* slot,
            AssemblyResult* result, std::vector<T>& iota, std::vector<T>& scratch,
            std::vector<T>& label_scratch, std::vector<uint8_t>& mask_scratch)
      : opt_(options),
        sources_(sources),
        ids_(reinterpret_cast<T*>(slot + layout.input_ids)),
        labels_(reinterpret_cast<T*>(slot + layout.labels)),
        pos_(layout.has_position_ids ? reinterpret_cast<T*>(slot + layout.position_ids) : nullptr),
        seg_(layout.has_segment_ids ? reinterpret_cast<T*>(slot + layout.segment_ids) : nullptr),
        cu_(reinterpret_cast<int32_t*>(slot + layout.cu_seqlens)),
        mask_(layout.has_mask ? slot + layout.attention_mask : nullptr),
        loss_mask_(layout.has_loss_mask ? reinterpret_cast<T*>(slot + layout.loss_mask) : nullptr),
        seq_idx_(layout.has_seq_idx ? reinterpret_cast<int32_t*>(slot + layout.seq_idx) : nullptr),
        cu_padded_(layout.has_cu_seqlens_padded
                       ? reinterpret_cast<int32_t*>(slot + layout.cu_seqlens_padded)
                       : nullptr),
        result_(result),
        iota_(iota),
        scratch_(scratch),
        label_scratch_(label_scratch),
        mask_scratch_(mask_scratch) {}

  Status Run(const std::vector<Row>& rows) {
    const size_t S = static_cast<size_t>(opt_.seq_len);
    std::vector<SourceCount> sources = std::move(result_->sources);  // keeps its capacity
    *result_ = AssemblyResult{};
    sources.clear();
    result_->sources = std::move(sources);
    // position_ids of a piece are 0, 1, ...: copied from this table rather than counted, so every
    // per-token pass below is a memcpy or a fill (this loop is the loader's hot path).
    if (iota_.size() != S) {
      iota_.resize(S);
      for (size_t i = 0; i < S; ++i) iota_[i] = static_cast<T>(i);
    }
    // Pieces are read here first (cache-resident), then streamed into the slot.
    scratch_.resize(S + 1);
    if (loss_mask_ != nullptr) {
      label_scratch_.resize(S);
      mask_scratch_.resize(S + 1);
    }
    cu_[0] = 0;
    if (cu_padded_ != nullptr) cu_padded_[0] = 0;
    num_cu_ = 1;
    Status status;
    rows_ = &rows;
    for (size_t r = 0; r < rows.size() && status.ok(); ++r) status = Row(rows[r], r * S);
    if (status.ok() && seq_idx_ != nullptr) {
      // Segment k covers the flattened positions [cu[k], cu[k + 1]) (cu_seqlens_padded's when
      // documents are padded: the padding belongs to its document's segment).
      const int32_t* cu = cu_padded_ != nullptr ? cu_padded_ : cu_;
      for (int k = 0; k + 1 < num_cu_; ++k) {
        StreamFill<int32_t>(seq_idx_ + cu[k], static_cast<size_t>(cu[k + 1] - cu[k]), k);
      }
    }
    if (status.ok() && opt_.max_documents_per_row > 0) FillCuSeqlens();
    StreamFence();
    STOKER_RETURN_IF_ERROR(status);
    result_->num_cu_seqlens = num_cu_;
    return Status::OK();
  }

 private:
  // Reads tokens [offset, offset+count) of a piece into `out`, timing the read.
  Status Read(const RowPiece& p, uint64_t offset, uint64_t count, T* out) {
    uint64_t t0 = SteadyNowNs();
    Status s = sources_[p.dataset]->Read(p.document, offset, count, out);
    result_->read_ns += SteadyNowNs() - t0;
    if (!s.ok()) {
      return s.WithContext("dataset " + std::to_string(p.dataset) + " (" +
                           sources_[p.dataset]->path() + ") document " +
                           std::to_string(p.document) + " tokens [" + std::to_string(offset) +
                           ", " + std::to_string(offset + count) + ")");
    }
    return Status::OK();
  }

  // Checks piece `p` against its reader; sets *document_length (the piece's whole document).
  Status CheckPiece(const RowPiece& p, size_t used, size_t S, uint64_t* document_length) {
    // Messages are built only on failure: this runs for every piece of every row.
    auto where = [&] {
      return "dataset " + std::to_string(p.dataset) + " document " + std::to_string(p.document);
    };
    if (p.dataset >= sources_.size()) return Corruption("plan names missing " + where());
    const DocumentReader& src = *sources_[p.dataset];
    const std::optional<uint64_t> length = src.FindDocumentLength(p.document);
    if (!length) return Corruption(src.path() + ": plan names missing " + where());
    if (p.length == 0 || p.offset + p.length > *length) {
      return Corruption(src.path() + ": plan piece [" + std::to_string(p.offset) + ", " +
                        std::to_string(p.offset + p.length) + ") is outside " + where());
    }
    if (used + PaddedLength(p.length, pad_to_) > S) {
      return Internal("plan row longer than seq_len at " + where());
    }
    *document_length = *length;
    return Status::OK();
  }

  // The piece `ahead` places after piece k of `row`, in this row or the following ones; or null.
  const RowPiece* PieceAhead(const stoker::Row& row, size_t k, size_t ahead) const {
    size_t r = static_cast<size_t>(&row - rows_->data());
    k += ahead;
    while (r < rows_->size() && k >= (*rows_)[r].pieces.size()) {
      k -= (*rows_)[r].pieces.size();
      ++r;
    }
    const RowPiece* p = r < rows_->size() ? &(*rows_)[r].pieces[k] : nullptr;
    return p != nullptr && p->dataset < sources_.size() ? p : nullptr;
  }

  // Reads are random accesses (shuffled documents): while piece k is copied, the tokens of the
  // next piece and the index entry of the one after are fetched into the cache. Worth about 10%
  // of the loader's tokens/s on a 2-core VM.
  void PrefetchAfter(const stoker::Row& row, size_t k) {
    if (const RowPiece* p = PieceAhead(row, k, 2)) sources_[p->dataset]->PrefetchIndex(p->document);
    if (const RowPiece* p = PieceAhead(row, k, 1)) {
      sources_[p->dataset]->PrefetchTokens(p->document, p->offset);
    }
  }

  // max_documents_per_row: cu_seqlens to its fixed capacity, repeating the last offset.
  void FillCuSeqlens() {
    const int capacity = opt_.CuSeqlensCapacity();
    for (; num_cu_ < capacity; ++num_cu_) {
      cu_[num_cu_] = cu_[num_cu_ - 1];
      if (cu_padded_ != nullptr) cu_padded_[num_cu_] = cu_padded_[num_cu_ - 1];
    }
  }

  // A segment of `length` real tokens taking `room` positions (more only when padded).
  void AddSegment(size_t length, size_t room) {
    cu_[num_cu_] = cu_[num_cu_ - 1] + static_cast<int32_t>(length);
    if (cu_padded_ != nullptr)
      cu_padded_[num_cu_] = cu_padded_[num_cu_ - 1] + static_cast<int32_t>(room);
    ++num_cu_;
    result_->max_seqlen = std::max(result_->max_seqlen, static_cast<int>(room));
  }
  void AddSegment(size_t length) { AddSegment(length, length); }

  // The padding after a piece of n tokens at `at` up to its room (pad_each_document_to): pad ids,
  // no target, positions and segment id continuing the piece's (its attention segment).
  void PadPiece(size_t at, size_t n, size_t room, T segment) {
    if (room == n) return;
    StreamFill(ids_ + at + n, room - n, static_cast<T>(opt_.pad_token_id));
    StreamFill(labels_ + at + n, room - n, static_cast<T>(kIgnoreIndex));
    if (pos_ != nullptr) StreamCopy(pos_ + at + n, iota_.data() + n, room - n);
    if (seg_ != nullptr) StreamFill(seg_ + at + n, room - n, segment);
    if (loss_mask_ != nullptr) StreamFill(loss_mask_ + at + n, room - n, T{0});
  }

  // Positions [begin, begin+n) become padding or a hole: pad id, no target, segment 0.
  void Blank(size_t begin, size_t n) {
    StreamFill(ids_ + begin, n, static_cast<T>(opt_.pad_token_id));
    StreamFill(labels_ + begin, n, static_cast<T>(kIgnoreIndex));
    if (pos_ != nullptr) StreamFill(pos_ + begin, n, T{0});
    if (seg_ != nullptr) StreamFill(seg_ + begin, n, T{0});
    if (loss_mask_ != nullptr) StreamFill(loss_mask_ + begin, n, T{0});
  }

  // The trained flags of tokens [p.offset, p.offset + count) into mask_scratch_: the source's loss
  // mask, or all trained for a source without one (a text dataset mixed with chat data).
  Status ReadMask(const RowPiece& p, uint64_t count) {
    const DocumentReader& src = *sources_[p.dataset];
    if (!src.has_loss_mask()) {
      std::fill_n(mask_scratch_.data(), count, uint8_t{1});
      return Status::OK();
    }
    Status s = src.ReadLossMask(p.document, p.offset, count, mask_scratch_.data());
    if (!s.ok()) {
      return s.WithContext("dataset " + std::to_string(p.dataset) + " (" + src.path() +
                           ") document " + std::to_string(p.document));
    }
    return Status::OK();
  }

  // Chat data: the labels and loss mask of a piece of n tokens at `at` (`tokens` holds n + 1
  // when `split`): labels[t] = tokens[t+1] where token t+1 is trained, else -100.
  uint64_t MaskedLabels(const T* tokens, size_t at, size_t n, bool split) {
    const uint8_t* m = mask_scratch_.data();
    T* labels = label_scratch_.data();
    const size_t targets = split ? n : n - 1;  // positions with a next token in this document
    uint64_t trained = 0;
    for (size_t t = 0; t < targets; ++t) {
      labels[t] = m[t + 1] != 0 ? tokens[t + 1] : static_cast<T>(kIgnoreIndex);
      trained += m[t + 1] != 0;
    }
    for (size_t t = targets; t < n; ++t) labels[t] = static_cast<T>(kIgnoreIndex);
    StreamCopy(labels_ + at, labels, n);
    // loss_mask[t] = 1 exactly where labels[t] is a target (reuses the buffer: labels are out).
    for (size_t t = 0; t < n; ++t) labels[t] = labels[t] != static_cast<T>(kIgnoreIndex);
    StreamCopy(loss_mask_ + at, labels, n);
    result_->trained_tokens += trained;
    return trained;
  }

  SourceCount& Source(uint32_t dataset) {
    std::vector<SourceCount>& s = result_->sources;
    if (dataset >= s.size()) s.resize(dataset + 1);
    return s[dataset];
  }

  Status Row(const Row& row, size_t base) {
    const size_t S = static_cast<size_t>(opt_.seq_len);
    if (opt_.max_documents_per_row > 0 &&
        row.pieces.size() > static_cast<size_t>(opt_.max_documents_per_row)) {
      return Internal("plan row holds " + std::to_string(row.pieces.size()) +
                      " documents, more than max_documents_per_row=" +
                      std::to_string(opt_.max_documents_per_row));
    }
    size_t used = 0;
    // Position whose label is the next piece's first token (cross-document targets), if any.
    int64_t pending_cross = -1;
    uint32_t pending_dataset = 0;  // the dataset of the piece that position belongs to
    for (size_t k = 0; k < row.pieces.size(); ++k) {
      const RowPiece& p = row.pieces[k];
      PrefetchAfter(row, k);
      uint64_t document_length = 0;
      Status s = CheckPiece(p, used, S, &document_length);
      if (s.code() == StatusCode::kInternal) return s;
      const size_t at = base + used;
      const size_t n = s.ok() ? p.length : std::min<uint64_t>(p.length, S - used);
      const size_t room = std::min<size_t>(PaddedLength(n, pad_to_), S - used);
      bool split = false;
      if (s.ok()) {
        // A piece that ends inside its document also reads the token after it: its last label.
        split = p.offset + p.length < document_length;
        s = Read(p, p.offset, p.length + (split ? 1 : 0), scratch_.data());
        if (s.ok() && loss_mask_ != nullptr) s = ReadMask(p, p.length + (split ? 1 : 0));
      }
      if (!s.ok()) {
        if (!opt_.skip_bad_documents) return s;
        ++result_->skipped_documents;
        Blank(at, room);
        AddSegment(room);
        pending_cross = -1;
        used += room;
        continue;
      }
      const T* tokens = scratch_.data();
      if (pending_cross >= 0) {
        // The previous document's last label is this one's first token (when trained).
        const bool trained = loss_mask_ == nullptr || mask_scratch_[0] != 0;
        labels_[pending_cross] = trained ? tokens[0] : static_cast<T>(kIgnoreIndex);
        if (loss_mask_ != nullptr) loss_mask_[pending_cross] = trained ? 1 : 0;
        result_->trained_tokens += trained;
        Source(pending_dataset).trained_tokens += trained;
      }
      pending_cross = -1;
      StreamCopy(ids_ + at, tokens, n);
      uint64_t trained = split ? n : n - 1;
      if (loss_mask_ != nullptr) {
        trained = MaskedLabels(tokens, at, n, split);
      } else {
        StreamCopy(labels_ + at, tokens + 1, n - 1);
        labels_[at + n - 1] = split ? tokens[n] : static_cast<T>(kIgnoreIndex);
        result_->trained_tokens += trained;
      }
      SourceCount& source = Source(p.dataset);
      source.tokens += n;
      source.trained_tokens += trained;
      source.documents += p.offset == 0;
      ++source.pieces;
      if (!split && opt_.cross_document_targets) {
        pending_cross = static_cast<int64_t>(at + n - 1);
        pending_dataset = p.dataset;
      }
      // Each piece is its own attention segment, so a continuation restarts its positions too.
      if (pos_ != nullptr) StreamCopy(pos_ + at, iota_.data(), n);
      if (seg_ != nullptr) StreamFill(seg_ + at, n, static_cast<T>(k + 1));
      PadPiece(at, n, room, static_cast<T>(k + 1));
      AddSegment(n, room);
      result_->real_tokens += n;
      used += room;
    }
    if (used < S) {
      Blank(base + used, S - used);
      AddSegment(S - used);
    }
    if (mask_ != nullptr) {
      StreamFence();  // Mask reads segment ids just streamed
      Mask(base);
    }
    return Status::OK();
  }

  // Causal block-diagonal: i may attend j when both are in the same (non-padding) segment, j <= i.
  void Mask(size_t base) {
    const size_t S = static_cast<size_t>(opt_.seq_len);
    const size_t row = base / S;
    uint8_t* m = mask_ + row * S * S;
    for (size_t i = 0; i < S; ++i) {
      const T si = seg_[base + i];
      for (size_t j = 0; j < S; ++j) {
        m[i * S + j] = (si != 0 && j <= i && seg_[base + j] == si) ? 1 : 0;
      }
    }
  }

  const AssemblyOptions& opt_;
  const std::vector<const DocumentReader*>& sources_;
  T* ids_;
  T* labels_;
  T* pos_;
  T* seg_;
  int32_t* cu_;
  uint8_t* mask_;
  T* loss_mask_;
  int32_t* seq_idx_;
  int32_t* cu_padded_;
  const uint64_t pad_to_ = static_cast<uint64_t>(std::max(opt_.pad_each_document_to, 0));
  AssemblyResult* result_;
  int num_cu_ = 0;
  std::vector<T>& iota_;
  std::vector<T>& scratch_;
  std::vector<T>& label_scratch_;
  std::vector<uint8_t>& mask_scratch_;
  const std::vector<stoker::Row>* rows_ = nullptr;
};

}  // namespace

int AssemblyOptions::CuSeqlensCapacity() const {
  const int64_t cells = int64_t{batch_size} * seq_len;
  if (max_documents_per_row <= 0) return static_cast<int>(cells + 1);
  return static_cast<int>(std::min(cells, int64_t{batch_size} * (max_documents_per_row + 1)) + 1);
}

BatchLayout BatchLayout::For(const AssemblyOptions& options) {
  BatchLayout l;
  // A context-parallel rank's [B, S] tensors hold S / cp_size positions per row.
  const size_t cells =
      static_cast<size_t>(options.batch_size) * options.seq_len / std::max(1, options.cp_size);
  l.elem_bytes = options.dtype == TokenDType::kInt32 ? 4 : 8;
  size_t at = 0;
  auto section = [&](size_t bytes) {
    size_t start = at;
    at = AlignUp(at + bytes);
    return start;
  };
  l.input_ids = section(cells * l.elem_bytes);
  l.labels = section(cells * l.elem_bytes);
  l.has_position_ids = options.position_ids;
  l.has_segment_ids = options.segment_ids;
  if (l.has_position_ids) l.position_ids = section(cells * l.elem_bytes);
  if (l.has_segment_ids) l.segment_ids = section(cells * l.elem_bytes);
  l.cu_seqlens = section(options.CuSeqlensCapacity() * sizeof(int32_t));
  l.has_loss_mask = options.loss_mask;
  if (l.has_loss_mask) l.loss_mask = section(cells * l.elem_bytes);
  l.has_seq_idx = options.seq_idx;
  if (l.has_seq_idx) l.seq_idx = section(cells * sizeof(int32_t));
  l.has_cu_seqlens_padded = options.pad_each_document_to > 1;
  if (l.has_cu_seqlens_padded) {
    l.cu_seqlens_padded = section(options.CuSeqlensCapacity() * sizeof(int32_t));
  }
  if (options.flex.block_size > 0) {
    Result<FlexTableShape> shape =
        FlexTableShapeFor(options.flex, options.batch_size, options.seq_len);
    l.flex_elements = shape.ok() ? shape->total_elements() : 0;  // checked when the loader opens
    if (l.flex_elements > 0) l.flex_tables = section(l.flex_elements * sizeof(int32_t));
  }
  l.has_mask = options.attention_mask;
  if (l.has_mask) l.attention_mask = section(cells * options.seq_len);
  l.total_bytes = at;
  return l;
}

Status AssembleBatch(const AssemblyOptions& options, const BatchLayout& layout,
                     const std::vector<const DocumentReader*>& sources,
                     const std::vector<Row>& rows, uint8_t* slot, AssemblyResult* result,
                     AssemblyScratch* scratch) {
  if (rows.size() != static_cast<size_t>(options.batch_size)) {
    return Internal("plan gave " + std::to_string(rows.size()) + " rows for a batch of " +
                    std::to_string(options.batch_size));
  }
  AssemblyScratch local;
  AssemblyScratch& s = scratch != nullptr ? *scratch : local;
  if (options.cp_size > 1) {
    // The whole rows first (every CP rank assembles the same), then this rank's share.
    AssemblyOptions whole = options;
    whole.cp_size = 1;
    const BatchLayout full = BatchLayout::For(whole);
    s.full_slot.resize(full.total_bytes);
    STOKER_RETURN_IF_ERROR(
        AssembleBatch(whole, full, sources, rows, s.full_slot.data(), result, &s));
    SliceContextParallel(options, full, s.full_slot.data(), result->num_cu_seqlens, layout, slot);
    return Status::OK();
  }
  Status status = options.dtype == TokenDType::kInt32
                      ? Assembler<int32_t>(options, layout, sources, slot, result, s.iota32,
                                           s.tokens32, s.labels32, s.mask)
                            .Run(rows)
                      : Assembler<int64_t>(options, layout, sources, slot, result, s.iota64,
                                           s.tokens64, s.labels64, s.mask)
                            .Run(rows);
  if (!status.ok() || layout.flex_elements == 0) return status;
  // The block tables from the segments over the flattened batch (padded ones when padded).
  const int32_t* cu = reinterpret_cast<const int32_t*>(
      slot + (layout.has_cu_seqlens_padded ? layout.cu_seqlens_padded : layout.cu_seqlens));
  STOKER_ASSIGN_OR_RETURN(FlexTableShape shape,
                          FlexTableShapeFor(options.flex, options.batch_size, options.seq_len));
  return BuildFlexBlockTables(
      options.flex, options.batch_size, options.seq_len,
      std::span<const int32_t>(cu, static_cast<size_t>(result->num_cu_seqlens)),
      FlexBlockTables::Slice(shape, reinterpret_cast<int32_t*>(slot + layout.flex_tables)));
}

}  // namespace stoker::loader
