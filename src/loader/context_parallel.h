// Context parallelism: one CP rank's share of an assembled batch (LoaderOptions::cp_size,
// cp_rank, cp_layout; docs/loader.md, "Context parallelism").
//
// Each segment of the batch (a document padded by pad_each_document_to, or a padding run: the
// segments of cu_seqlens_padded, else of cu_seqlens) of L tokens is cut into equal chunks: with
// "zigzag", 2 * cp chunks of which rank r keeps chunks r and 2cp - 1 - r (in that order), as
// TransformerEngine and Megatron split a THD batch; with "contiguous", cp chunks of which it keeps
// chunk r. Every [B, S] tensor keeps those positions, in order, as [B, S / cp]; cu_seqlens and
// cu_seqlens_padded are copied whole. Pure functions of their arguments: every CP rank computes
// its own share from the same rows, with no communication. Thread-safe (no state).
#pragma once

#include "loader/batch_layout.h"
#include "stoker/loader.h"
#include "stoker/status.h"

namespace stoker::loader {

// OK unless cp_size / cp_rank / cp_layout are out of range, or cp_size > 1 and the documents are
// not padded to a multiple of 2 * cp_size (zigzag) or cp_size (contiguous), or a dense
// attention_mask is asked for: kInvalidArgument saying what to set.
Status CheckContextParallel(const LoaderOptions& options);

// Copies rank options.cp_rank's share of the full batch in `full_slot` (laid out as `full`, with
// `num_cu_seqlens` entries of cu_seqlens) into `slot`, laid out as `layout`
// (BatchLayout::For(options), options.cp_size > 1).
void SliceContextParallel(const AssemblyOptions& options, const BatchLayout& full,
                          const uint8_t* full_slot, int num_cu_seqlens, const BatchLayout& layout,
                          uint8_t* slot);

}  // namespace stoker::loader
