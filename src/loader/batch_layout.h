// BatchLayout: where each tensor of a batch lives inside one ring slot, and the assembler that
// writes planned rows into a slot.
//
// A slot is one contiguous block (so one cudaMemcpyAsync moves a whole batch):
//   input_ids, labels, position_ids, segment_ids  [B, S] in the token dtype (int32 or int64);
//                                                  position_ids and segment_ids only when asked
//   loss_mask (chat data only)                     [B, S] in the token dtype, 1 = labels[t] is
//                                                  trained (docs/chat.md, "Batches")
//   cu_seqlens                                     int32, at most B * S + 1 entries
//   cu_seqlens_padded (pad_each_document_to > 1)   int32, as many entries as cu_seqlens
//   seq_idx (only when asked)                      int32 [B, S], each token's segment index
//   attention_mask (only when asked)               uint8 [B, S, S], 1 = may attend
// each section starting on a 256-byte boundary. Not thread-safe: plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "loader/flex_block_mask.h"
#include "stoker/document_reader.h"
#include "stoker/loader.h"
#include "stoker/plan.h"
#include "stoker/status.h"
#include "stoker/token_source.h"

namespace stoker::loader {

struct AssemblyOptions {
  int batch_size = 1;
  int seq_len = 1;
  TokenDType dtype = TokenDType::kInt64;  // kInt32 or kInt64
  bool cross_document_targets = false;
  bool attention_mask = false;  // needs segment_ids
  bool position_ids = true;
  bool segment_ids = true;
  bool skip_bad_documents = false;  // error policy "skip"; otherwise "fail"
  // Chat data: labels[t] = input_ids[t+1] only where token t+1 is trained (the source's loss
  // mask; every token of a source without one), else -100; and a loss_mask tensor beside them.
  bool loss_mask = false;
  bool seq_idx = false;  // also seq_idx: the index in cu_seqlens of each token's segment
  // > 1: each piece is followed by padding up to a multiple of this (the plan left the room):
  // pad ids, labels -100, loss mask 0, positions and segment id continuing the piece's. Then
  // cu_seqlens holds each segment's real length (TransformerEngine's THD cu_seqlens) and
  // cu_seqlens_padded its offsets in the flattened batch (cu_seqlens_q_padded).
  int pad_each_document_to = 0;
  // > 0: rows hold at most this many pieces (the plan's max_documents_per_row), and cu_seqlens
  // (and cu_seqlens_padded) always have CuSeqlensCapacity() entries, the unused ones equal to the
  // last offset: a fixed shape for CUDA graphs. A row with more pieces fails the batch.
  int max_documents_per_row = 0;
  // Entries of cu_seqlens: batch_size * (max_documents_per_row + 1) + 1 (each row's documents and
  // its padding run) when fixed; else at most batch_size * seq_len + 1.
  int CuSeqlensCapacity() const;
  // Context parallelism (loader/context_parallel.h): > 1 assembles the whole rows into the
  // scratch, then keeps rank cp_rank's share of each segment ([B, S / cp_size] tensors).
  int cp_size = 1;
  int cp_rank = 0;
  bool cp_zigzag = true;  // else contiguous
  // flex.block_size > 0: also the FlexAttention block tables of the batch's document mask
  // (loader/flex_block_mask.h), one int32 section of FlexTableShape::total_elements().
  FlexMaskSpec flex;
  int64_t pad_token_id = 0;
};

struct BatchLayout {
  size_t elem_bytes = 0;
  size_t input_ids = 0, labels = 0, position_ids = 0, segment_ids = 0;  // byte offsets
  size_t cu_seqlens = 0;
  size_t attention_mask = 0;  // valid when has_mask
  bool has_mask = false;
  size_t loss_mask = 0;  // valid when has_loss_mask
  bool has_loss_mask = false;
  size_t seq_idx = 0;  // valid when has_seq_idx
  bool has_seq_idx = false;
  size_t cu_seqlens_padded = 0;  // valid when has_cu_seqlens_padded
  size_t flex_tables = 0;        // valid when flex_elements > 0
  int64_t flex_elements = 0;     // int32 entries of the flex block tables; 0: none
  bool has_cu_seqlens_padded = false;
  bool has_position_ids = true, has_segment_ids = true;  // else those offsets mean nothing
  size_t total_bytes = 0;

  static BatchLayout For(const AssemblyOptions& options);
};

// What assembling one batch found, beside the tensors.
struct AssemblyResult {
  int num_cu_seqlens = 0;       // entries written to cu_seqlens (segments + 1; fixed: capacity)
  int max_seqlen = 0;           // the longest segment (padded, with pad_each_document_to)
  uint64_t real_tokens = 0;     // non-padding positions
  uint64_t trained_tokens = 0;  // positions whose label is trained (loss_mask 1; without a loss
                                // mask: every label that is not -100)
  uint64_t skipped_documents = 0;
  uint64_t read_ns = 0;              // time inside DocumentReader::Read
  std::vector<SourceCount> sources;  // per dataset (by index), up to the last one in the batch
};

// Buffers an assembler reuses from batch to batch (a piece's tokens, the 0..S-1 positions). A
// worker keeps one, so that assembly allocates nothing in the steady state (freed memory would
// otherwise pile up in each worker thread's own malloc arena).
struct AssemblyScratch {
  std::vector<int64_t> tokens64, iota64, labels64;
  std::vector<int32_t> tokens32, iota32, labels32;
  std::vector<uint8_t> mask;
  std::vector<uint8_t> full_slot;  // context parallelism: the whole rows, before slicing
};

// Writes `rows` (exactly batch_size of them) into `slot`, laid out as `layout`. Reads come from
// `sources[piece.dataset]`. A failed read or a piece outside its document fails the batch (error
// naming the dataset, document and offset) unless options.skip_bad_documents, in which case the
// piece's positions become a masked hole (labels -100, segment 0) and are counted as skipped.
// `scratch` may be null (buffers are then allocated for this call).
Status AssembleBatch(const AssemblyOptions& options, const BatchLayout& layout,
                     const std::vector<const DocumentReader*>& sources,
                     const std::vector<Row>& rows, uint8_t* slot, AssemblyResult* result,
                     AssemblyScratch* scratch = nullptr);

}  // namespace stoker::loader
