// FlexBlockTables: the block tables of FlexAttention's BlockMask for a packed batch's document
// mask, built on the CPU from the batch's segment boundaries (cu_seqlens), so that a trainer makes
// its BlockMask without create_block_mask (which evaluates the mask on every token pair of the
// batch: attention-gym #149, "> 10x the attention's time"). Pure functions: not thread-safe only in
// that the caller owns the output buffers.
//
// The mask is the one `seq_idx` describes (docs/loader.md): token q may attend token k when both
// lie in the same segment of cu_seqlens and k <= q (kind kCausal), and also q - k < window
// (kSlidingWindow). Padding runs are segments of their own, as in cu_seqlens. Blocks are
// block_size x block_size tiles of [seq_len, seq_len] per row; a tile is "full" when every pair in
// it may attend (FlexAttention then skips the mask function there), "partial" when some may, and
// left out when none may. Tables follow torch's layout
// (torch.nn.attention.flex_attention.BlockMask, without the head dimension, which is 1): for each
// row and query block, the count of partial (full) key blocks and their indices, ascending, then
// the remaining indices ascending, exactly as create_block_mask orders them; and the same
// transposed (per key block, the query blocks).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "stoker/status.h"

namespace stoker::loader {

enum class FlexMaskKind : uint8_t {
  kCausal,         // same segment, k <= q
  kSlidingWindow,  // same segment, k <= q, q - k < window
};
// "causal", "sliding_window"; Parse fails with kInvalidArgument naming the accepted values.
std::string_view FlexMaskKindName(FlexMaskKind kind);
Result<FlexMaskKind> ParseFlexMaskKind(std::string_view name);

struct FlexMaskSpec {
  int block_size = 128;  // FlexAttention's BLOCK_SIZE (query and key blocks alike)
  FlexMaskKind kind = FlexMaskKind::kCausal;
  int window = 0;  // kSlidingWindow: tokens a query sees, itself included; > 0
};

// The int32 counts of each table for `rows` rows of `seq_len` tokens:
// blocks = ceil(seq_len / block_size); num tables [rows, blocks]; index tables
// [rows, blocks, blocks].
struct FlexTableShape {
  int rows = 0;
  int blocks = 0;
  int64_t num_elements() const { return int64_t{rows} * blocks; }
  int64_t index_elements() const { return num_elements() * blocks; }
  // All eight tables, laid out one after the other as FlexBlockTables::Slice does.
  int64_t total_elements() const { return 4 * num_elements() + 4 * index_elements(); }
};
Result<FlexTableShape> FlexTableShapeFor(const FlexMaskSpec& spec, int rows, int seq_len);

// Views of the eight tables inside one caller-owned int32 buffer of shape.total_elements().
struct FlexBlockTables {
  int32_t* kv_num_blocks = nullptr;       // [rows, blocks]: partial key blocks per query block
  int32_t* kv_indices = nullptr;          // [rows, blocks, blocks]
  int32_t* full_kv_num_blocks = nullptr;  // [rows, blocks]: full key blocks per query block
  int32_t* full_kv_indices = nullptr;     // [rows, blocks, blocks]
  int32_t* q_num_blocks = nullptr;        // [rows, blocks]: partial query blocks per key block
  int32_t* q_indices = nullptr;           // [rows, blocks, blocks]
  int32_t* full_q_num_blocks = nullptr;   // [rows, blocks]
  int32_t* full_q_indices = nullptr;      // [rows, blocks, blocks]
  // The order above: the four num tables first, then the four index tables.
  static FlexBlockTables Slice(const FlexTableShape& shape, int32_t* buffer);
};

// Fills `tables` for a batch of `rows` rows of `seq_len` tokens whose segments are `cu_seqlens`
// (over the flattened [rows * seq_len] batch, starting at 0 and ending at rows * seq_len, with a
// boundary at every row's start: the loader's cu_seqlens). kInvalidArgument naming the problem for
// cu_seqlens that are not such boundaries or a bad spec.
Status BuildFlexBlockTables(const FlexMaskSpec& spec, int rows, int seq_len,
                            std::span<const int32_t> cu_seqlens, const FlexBlockTables& tables);

}  // namespace stoker::loader
