#include "loader/loader_options_table.h"

#include <string>

#include "cache/cache_defaults.h"
#include "plan/plan_options_table.h"

namespace stoker {
namespace {

Result<TokenDType> ParseBatchDType(std::string_view name) {
  STOKER_ASSIGN_OR_RETURN(TokenDType d, ParseTokenDType(name));
  if (d != TokenDType::kInt32 && d != TokenDType::kInt64) {
    return InvalidArgument("token_dtype must be 'int32' or 'int64', not '" + std::string(name) +
                           "'");
  }
  return d;
}

Result<uint64_t> ParseCacheBudget(std::string_view text) {
  return cache::ParseCacheSize(text, "cache_size");
}

OptionTable<LoaderOptions> Build() {
  using L = LoaderOptions;
  OptionTable<L> t = RebaseOptions<L>(PlanOptionTable());
  t.push_back(WholeOption<L>("num_workers",
                             "Worker threads (0 = cores / $LOCAL_WORLD_SIZE, at least 1)",
                             &L::num_workers)
                  .Cli("--num-workers"));
  t.push_back(
      BoolOption<L>("pin_memory", "Page-locked ring when a CUDA device is usable", &L::pin_memory));
  t.push_back(
      WholeOption<L>("prefetch_factor", "Batches in flight per worker", &L::prefetch_factor, 1)
          .Cli("--prefetch-factor"));
  t.push_back(
      BoolOption<L>("persistent_workers", "Threads live across epochs", &L::persistent_workers));
  t.push_back(WholeOption<L>("device", "CUDA device of device batches; -1 = host batches only",
                             &L::device, -1));
  t.push_back(WholeOption<L>("device_buffers", "Device copies in flight (2 = double buffering)",
                             &L::device_buffers, 1));
  t.push_back(ChoiceOption<L>("token_dtype", "int32 | int64, for every [B, S] tensor",
                              &L::token_dtype, {"int32", "int64"}, TokenDTypeName, ParseBatchDType)
                  .Cli("--token-dtype"));
  t.push_back(BoolOption<L>("cross_document_targets",
                            "The label of a document's last token is the next document's first",
                            &L::cross_document_targets)
                  .Cli("--cross-document-targets"));
  t.push_back(BoolOption<L>("attention_mask",
                            "Also build a dense causal block-diagonal mask [B, S, S]",
                            &L::attention_mask)
                  .Cli("--attention-mask"));
  t.push_back(BoolOption<L>("position_ids", "Build position_ids [B, S]", &L::position_ids)
                  .Cli("--no-position-ids"));
  t.push_back(BoolOption<L>("segment_ids", "Build segment_ids [B, S]", &L::segment_ids)
                  .Cli("--no-segment-ids"));
  t.push_back(BoolOption<L>("seq_idx",
                            "Also build seq_idx int32 [B, S]: each token's segment in cu_seqlens",
                            &L::seq_idx)
                  .Cli("--seq-idx"));
  t.push_back(WholeOption<L>("cp_size",
                             "Context-parallel ranks sharing each row (Python: context_parallel)",
                             &L::cp_size, 1)
                  .Cli("--cp-size")
                  .PyPart("context_parallel", 0));
  t.push_back(WholeOption<L>("cp_rank", "This context-parallel rank (Python: context_parallel)",
                             &L::cp_rank)
                  .Cli("--cp-rank")
                  .PyPart("context_parallel", 1));
  t.push_back(ChoiceTextOption<L>("cp_layout",
                                  "zigzag (chunks r and 2cp-1-r of each document, as TE) or "
                                  "contiguous (chunk r)",
                                  &L::cp_layout, {"zigzag", "contiguous"})
                  .Cli("--cp-layout"));
  t.push_back(WholeOption<L>("flex_block_size",
                             "FlexAttention block tables of each batch's document mask with this "
                             "BLOCK_SIZE; 0 = none (Python: flex_block_mask)",
                             &L::flex_block_size)
                  .Cli("--flex-block-size")
                  .PyPart("flex_block_mask", 0));
  t.push_back(ChoiceTextOption<L>("flex_mask_kind",
                                  "causal or sliding_window (Python: flex_block_mask)",
                                  &L::flex_mask_kind, {"causal", "sliding_window"})
                  .Cli("--flex-mask-kind")
                  .PyPart("flex_block_mask", 1));
  t.push_back(WholeOption<L>("flex_window",
                             "sliding_window: tokens a query sees (Python: flex_block_mask)",
                             &L::flex_window)
                  .Cli("--flex-window")
                  .PyPart("flex_block_mask", 2, true));
  t.push_back(ChoiceOption<L>("on_error",
                              "A bad read or corrupt piece: fail (the batch's error) or skip (a "
                              "masked hole, counted)",
                              &L::on_error, {"fail", "skip"}, ErrorPolicyName, ParseErrorPolicy)
                  .Cli("--on-error"));
  t.push_back(ChoiceOption<L>("long_documents",
                              "Documents longer than --seq-len: split (across rows), drop (left "
                              "out, counted) or truncate (the head); auto = drop for chat data, "
                              "split otherwise (docs/chat.md)",
                              &L::long_documents, {"auto", "split", "drop", "truncate"},
                              LongDocumentsName, ParseLongDocuments)
                  .Cli("--long-documents"));
  t.push_back(WholeOption<L>("pad_token_id", "input_ids value at padding positions",
                             &L::pad_token_id, INT64_MIN));
  t.push_back(BoolOption<L>("monitor_warnings", "The stall monitor's warnings on stderr",
                            &L::monitor_warnings));
  t.push_back(
      OtherOption<L>("monitor_sink", "Where the stall monitor's warnings go (C++ only)").Py("-"));
  t.push_back(TextOption<L>("cache_dir",
                            "Remote datasets through a node-local disk cache in DIR (\"auto\": "
                            "shards/ in the cache root; empty: no cache)",
                            &L::cache_dir)
                  .Cli("--cache-dir"));
  t.push_back(SizeOption<L>("cache_size_bytes",
                            "The cache's budget, e.g. 200GiB (0: 64 GiB or half the free disk)",
                            &L::cache_size_bytes, ParseCacheBudget)
                  .Cli("--cache-size")
                  .Py("cache_size"));
  return t;
}

}  // namespace

const OptionTable<LoaderOptions>& LoaderOptionTable() {
  static const OptionTable<LoaderOptions> table = Build();
  return table;
}

size_t LoaderOwnOptionsBegin() { return PlanOptionTable().size(); }

}  // namespace stoker
