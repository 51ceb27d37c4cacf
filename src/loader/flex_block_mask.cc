#include "loader/flex_block_mask.h"

#include <algorithm>
#include <string>
#include <vector>

namespace stoker::loader {
namespace {

enum BlockState : uint8_t { kEmpty = 0, kPartial = 1, kFull = 2 };

// One row's tile states, [blocks, blocks] (query block major), from the first token each query
// may see: lo[q] = its segment's start (and q - window + 1 for a sliding window). lo never
// decreases with q, so a tile [q0, q1) x [k0, k1) holds an allowed pair exactly when the first
// query at or after k0 sees k1 - 1 or earlier, and every pair when the last query sees k0 and the
// first query comes at or after k1 - 1.
void ClassifyTiles(const std::vector<int32_t>& lo, int seq_len, int block_size, int blocks,
                   std::vector<uint8_t>* states) {
  states->assign(static_cast<size_t>(blocks) * blocks, kEmpty);
  for (int i = 0; i < blocks; ++i) {
    const int q0 = i * block_size, q1 = std::min(seq_len, q0 + block_size);
    for (int j = 0; j <= i; ++j) {  // causal: no key block after the query block holds a pair
      const int k0 = j * block_size, k1 = std::min(seq_len, k0 + block_size);
      const int first_q = std::max(k0, q0);
      if (first_q >= q1 || lo[first_q] > k1 - 1) continue;
      const bool whole = q1 - q0 == block_size && k1 - k0 == block_size;
      const bool full = whole && q0 >= k1 - 1 && lo[q1 - 1] <= k0;
      (*states)[static_cast<size_t>(i) * blocks + j] = full ? kFull : kPartial;
    }
  }
}

// torch's _dense_to_ordered for one line of tiles: the count of tiles in state `want`, then their
// indices ascending, then every other index ascending. `at(n)` is the state of the line's n-th
// tile.
template <typename StateAt>
void OrderLine(int blocks, uint8_t want, StateAt at, int32_t* num, int32_t* indices) {
  int32_t count = 0;
  for (int n = 0; n < blocks; ++n) {
    if (at(n) == want) indices[count++] = n;
  }
  *num = count;
  int32_t rest = count;
  for (int n = 0; n < blocks; ++n) {
    if (at(n) != want) indices[rest++] = n;
  }
}

}  // namespace

std::string_view FlexMaskKindName(FlexMaskKind kind) {
  return kind == FlexMaskKind::kCausal ? "causal" : "sliding_window";
}

Result<FlexMaskKind> ParseFlexMaskKind(std::string_view name) {
  if (name == "causal") return FlexMaskKind::kCausal;
  if (name == "sliding_window") return FlexMaskKind::kSlidingWindow;
  return InvalidArgument("flex_block_mask kind must be 'causal' or 'sliding_window', not '" +
                         std::string(name) + "'");
}

Result<FlexTableShape> FlexTableShapeFor(const FlexMaskSpec& spec, int rows, int seq_len) {
  if (spec.block_size < 1) {
    return InvalidArgument("flex_block_mask block_size must be >= 1, got " +
                           std::to_string(spec.block_size));
  }
  if (spec.kind == FlexMaskKind::kSlidingWindow && spec.window < 1) {
    return InvalidArgument("flex_block_mask sliding_window needs a window >= 1, got " +
                           std::to_string(spec.window));
  }
  if (rows < 1 || seq_len < 1) {
    return InvalidArgument("flex_block_mask needs rows and seq_len >= 1");
  }
  return FlexTableShape{rows, (seq_len + spec.block_size - 1) / spec.block_size};
}

FlexBlockTables FlexBlockTables::Slice(const FlexTableShape& shape, int32_t* buffer) {
  const int64_t n = shape.num_elements(), x = shape.index_elements();
  FlexBlockTables t;
  t.kv_num_blocks = buffer;
  t.full_kv_num_blocks = buffer + n;
  t.q_num_blocks = buffer + 2 * n;
  t.full_q_num_blocks = buffer + 3 * n;
  int32_t* indices = buffer + 4 * n;
  t.kv_indices = indices;
  t.full_kv_indices = indices + x;
  t.q_indices = indices + 2 * x;
  t.full_q_indices = indices + 3 * x;
  return t;
}

Status BuildFlexBlockTables(const FlexMaskSpec& spec, int rows, int seq_len,
                            std::span<const int32_t> cu_seqlens, const FlexBlockTables& tables) {
  STOKER_ASSIGN_OR_RETURN(FlexTableShape shape, FlexTableShapeFor(spec, rows, seq_len));
  const int64_t total = int64_t{rows} * seq_len;
  if (cu_seqlens.size() < 2 || cu_seqlens.front() != 0 || cu_seqlens.back() != total) {
    return InvalidArgument("cu_seqlens must run from 0 to rows * seq_len (" +
                           std::to_string(total) + ")");
  }
  const int blocks = shape.blocks;
  std::vector<int32_t> lo(seq_len);
  std::vector<uint8_t> states;
  size_t seg = 0;  // the segment holding the current token
  for (int r = 0; r < rows; ++r) {
    const int64_t row_start = int64_t{r} * seq_len;
    for (int q = 0; q < seq_len; ++q) {
      const int64_t flat = row_start + q;
      while (cu_seqlens[seg + 1] <= flat) {
        if (cu_seqlens[seg + 1] < cu_seqlens[seg]) {
          return InvalidArgument("cu_seqlens must not decrease (entry " + std::to_string(seg + 1) +
                                 ")");
        }
        ++seg;
      }
      const int64_t start = cu_seqlens[seg];
      if (start < row_start) {
        return InvalidArgument("cu_seqlens has no boundary at the start of row " +
                               std::to_string(r) + " (a segment crosses rows)");
      }
      int32_t first = static_cast<int32_t>(start - row_start);
      if (spec.kind == FlexMaskKind::kSlidingWindow) first = std::max(first, q - spec.window + 1);
      lo[q] = first;
    }
    ClassifyTiles(lo, seq_len, spec.block_size, blocks, &states);
    const int64_t n0 = int64_t{r} * blocks;
    for (int i = 0; i < blocks; ++i) {
      const uint8_t* line = &states[static_cast<size_t>(i) * blocks];
      auto by_key = [line](int n) { return line[n]; };
      const int64_t at = (n0 + i) * blocks;
      OrderLine(blocks, kPartial, by_key, &tables.kv_num_blocks[n0 + i], &tables.kv_indices[at]);
      OrderLine(blocks, kFull, by_key, &tables.full_kv_num_blocks[n0 + i],
                &tables.full_kv_indices[at]);
    }
    for (int j = 0; j < blocks; ++j) {
      auto by_query = [&states, blocks, j](int n) {
        return states[static_cast<size_t>(n) * blocks + j];
      };
      const int64_t at = (n0 + j) * blocks;
      OrderLine(blocks, kPartial, by_query, &tables.q_num_blocks[n0 + j], &tables.q_indices[at]);
      OrderLine(blocks, kFull, by_query, &tables.full_q_num_blocks[n0 + j],
                &tables.full_q_indices[at]);
    }
  }
  return Status::OK();
}

}  // namespace stoker::loader
