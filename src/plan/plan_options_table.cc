#include "plan/plan_options_table.h"

namespace stoker {

const OptionTable<PlanOptions>& PlanOptionTable() {
  using P = PlanOptions;
  static const OptionTable<P> table = [] {
    OptionTable<P> t;
    t.push_back(
        WholeOption<P>("seq_len", "Tokens per row", &P::seq_len, 1).Cli("--seq-len").InState());
    t.push_back(WholeOption<P>("batch_size", "Rows per rank per step", &P::batch_size, 1)
                    .Cli("--batch-size"));
    t.push_back(
        WholeOption<P>("world_size", "Ranks (default: $WORLD_SIZE, else 1)", &P::world_size, 1)
            .Cli("--world-size"));
    t.push_back(
        WholeOption<P>("rank", "This rank (default: $RANK, else 0)", &P::rank).Cli("--rank"));
    t.push_back(WholeOption<P>("seed", "Shuffle seed", &P::seed).Cli("--seed").InState());
    t.push_back(ChoiceOption<P>("shuffle", "global | block | none", &P::shuffle,
                                {"global", "block", "none"}, ShuffleModeName, ParseShuffleMode)
                    .Cli("--shuffle")
                    .InState());
    t.push_back(WholeOption<P>("block_shards", "Shards shuffled together (--shuffle block)",
                               &P::block_shards, 1)
                    .Cli("--block-shards")
                    .InState([](const P& p) { return p.shuffle == ShuffleMode::kBlock; }));
    t.push_back(ChoiceOption<P>("pack", "concat | bestfit | pad", &P::pack,
                                {"concat", "bestfit", "pad"}, PackModeName, ParsePackMode)
                    .Cli("--pack")
                    .InState());
    t.push_back(WholeOption<P>("bestfit_window", "Documents packed together (bestfit)",
                               &P::bestfit_window, 1)
                    .Cli("--bestfit-window")
                    .InState([](const P& p) { return p.pack == PackMode::kBestFit; }));
    t.push_back(ChoiceOption<P>("remainder", "drop_last | pad (the last incomplete batch)",
                                &P::remainder, {"drop_last", "pad"}, RemainderPolicyName,
                                ParseRemainderPolicy)
                    .Cli("--remainder"));
    t.push_back(WholeOption<P>("pad_each_document_to",
                               "Pad every document in a row to a multiple of M tokens (2*cp for "
                               "context parallelism, or a kernel tile); 0 = no padding",
                               &P::pad_each_document_to)
                    .Cli("--pad-each-document-to")
                    .InState([](const P& p) { return p.pad_each_document_to > 1; }));
    t.push_back(WholeOption<P>("max_documents_per_row",
                               "At most N documents per row: cu_seqlens of fixed capacity (CUDA "
                               "graphs); bestfit closes a full row; 0 = no limit",
                               &P::max_documents_per_row)
                    .Cli("--max-documents-per-row")
                    .InState([](const P& p) { return p.max_documents_per_row > 0; }));
    t.push_back(
        OtherOption<P>("phases", "The mixture's phases (--mixture FILE; Python: stoker.Mixture)")
            .Py("-"));
    t.push_back(OtherOption<P>("run_rows",
                               "The run's length in global rows (--total-tokens/--total-steps; "
                               "Python: total_tokens/total_steps)")
                    .Py("-"));
    t.push_back(OtherOption<P>("dataset_names",
                               "The datasets' names, as a mixture file gives them (else their "
                               "absolute paths): what a checkpoint matches them by")
                    .Py("-"));
    return t;
  }();
  return table;
}

}  // namespace stoker
