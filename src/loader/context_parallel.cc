#include "loader/context_parallel.h"

#include <cstring>
#include <string>
#include <vector>

namespace stoker::loader {

Status CheckContextParallel(const LoaderOptions& o) {
  if (o.cp_layout != "zigzag" && o.cp_layout != "contiguous") {
    return InvalidArgument("loader: cp_layout must be 'zigzag' or 'contiguous', not '" +
                           o.cp_layout + "'");
  }
  if (o.cp_size < 1 || o.cp_rank >= o.cp_size) {
    return InvalidArgument("loader: context_parallel=(" + std::to_string(o.cp_size) + ", " +
                           std::to_string(o.cp_rank) +
                           "): cp_size must be at least 1 and cp_rank below it");
  }
  if (o.flex_block_size > 0) {
    STOKER_ASSIGN_OR_RETURN(FlexMaskKind kind, ParseFlexMaskKind(o.flex_mask_kind));
    FlexMaskSpec spec{static_cast<int>(o.flex_block_size), kind, static_cast<int>(o.flex_window)};
    Result<FlexTableShape> shape =
        FlexTableShapeFor(spec, static_cast<int>(o.batch_size), static_cast<int>(o.seq_len));
    if (!shape.ok()) return shape.status().WithContext("loader: flex_block_mask");
    if (o.cp_size > 1) {
      return InvalidArgument(
          "loader: flex_block_mask with context_parallel is not supported: the tables are the "
          "whole rows' mask; build them from cu_seqlens_padded with stoker.flex.block_tables");
    }
  }
  if (o.cp_size == 1) return Status::OK();
  const std::string what = "loader: context_parallel=(" + std::to_string(o.cp_size) + ", " +
                           std::to_string(o.cp_rank) + ")";
  const bool zigzag = o.cp_layout == "zigzag";
  const uint64_t unit = zigzag ? 2 * uint64_t{o.cp_size} : o.cp_size;
  if (o.pad_each_document_to < 2 || o.pad_each_document_to % unit != 0) {
    return InvalidArgument(what + " with cp_layout='" + o.cp_layout +
                           "' splits each document into " + std::to_string(unit) +
                           " equal chunks: set pad_each_document_to to a multiple of " +
                           (zigzag ? "2 * cp_size = " : "cp_size = ") + std::to_string(unit) +
                           " (it is " + std::to_string(o.pad_each_document_to) +
                           "), so that no document loses tokens (TransformerEngine #1930)");
  }
  if (o.attention_mask) {
    return InvalidArgument(what +
                           ": a dense attention_mask is not sliced by context "
                           "parallelism; use cu_seqlens or segment_ids");
  }
  return Status::OK();
}

void SliceContextParallel(const AssemblyOptions& o, const BatchLayout& full,
                          const uint8_t* full_slot, int num_cu_seqlens, const BatchLayout& layout,
                          uint8_t* slot) {
  struct Section {
    size_t from, to, elem;
  };
  std::vector<Section> sections = {{full.input_ids, layout.input_ids, full.elem_bytes},
                                   {full.labels, layout.labels, full.elem_bytes}};
  if (full.has_position_ids) {
    sections.push_back({full.position_ids, layout.position_ids, full.elem_bytes});
  }
  if (full.has_segment_ids) {
    sections.push_back({full.segment_ids, layout.segment_ids, full.elem_bytes});
  }
  if (full.has_loss_mask) sections.push_back({full.loss_mask, layout.loss_mask, full.elem_bytes});
  if (full.has_seq_idx) sections.push_back({full.seq_idx, layout.seq_idx, sizeof(int32_t)});
  const size_t cu_bytes = static_cast<size_t>(num_cu_seqlens) * sizeof(int32_t);
  std::memcpy(slot + layout.cu_seqlens, full_slot + full.cu_seqlens, cu_bytes);
  if (full.has_cu_seqlens_padded) {
    std::memcpy(slot + layout.cu_seqlens_padded, full_slot + full.cu_seqlens_padded, cu_bytes);
  }
  // Segments over the flattened batch: the padded offsets when documents are padded.
  const int32_t* cu = reinterpret_cast<const int32_t*>(
      full_slot + (full.has_cu_seqlens_padded ? full.cu_seqlens_padded : full.cu_seqlens));
  const size_t cp = static_cast<size_t>(o.cp_size), r = static_cast<size_t>(o.cp_rank);
  size_t out = 0;  // flattened position in this rank's share
  auto take = [&](size_t at, size_t n) {
    for (const Section& s : sections) {
      std::memcpy(slot + s.to + out * s.elem, full_slot + s.from + at * s.elem, n * s.elem);
    }
    out += n;
  };
  for (int k = 0; k + 1 < num_cu_seqlens; ++k) {
    const size_t a = static_cast<size_t>(cu[k]), length = static_cast<size_t>(cu[k + 1] - cu[k]);
    if (o.cp_zigzag) {
      const size_t c = length / (2 * cp);
      take(a + r * c, c);
      take(a + (2 * cp - 1 - r) * c, c);
    } else {
      const size_t c = length / cp;
      take(a + r * c, c);
    }
  }
}

}  // namespace stoker::loader
