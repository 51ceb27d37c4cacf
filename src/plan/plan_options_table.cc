#include "plan/plan_options_table.h"

#include "plan/mixture_file.h"
#include "plan/step_budget.h"

namespace stoker {
namespace {

// plan::ParseCount ("4M", "2T") with the row's name in its error.
auto CountOf(std::string_view name) {
  return [name](std::string_view text) -> Result<uint64_t> {
    Result<uint64_t> n = plan::ParseCount(text);
    if (!n.ok()) return n.status().WithContext(name);
    return n;
  };
}

bool TokenSteps(const PlanOptions& p) { return p.tokens_per_step > 0; }

// tokens_per_step_schedule: a text row that only takes what plan::StepBudget::Parse reads.
OptionRow<PlanOptions> ScheduleOption() {
  OptionRow<PlanOptions> r =
      TextOption<PlanOptions>("tokens_per_step_schedule",
                              "With tokens_per_step: a batch-size schedule "
                              "'TOKENS[..TOKENS]@END_ROW,...,TOKENS' over the token steps' global "
                              "rows (a mixture file's \"tokens_per_step\"); '' = none",
                              &PlanOptions::tokens_per_step_schedule);
  r.set = [](PlanOptions& p, std::string_view text) -> Status {
    STOKER_RETURN_IF_ERROR(plan::StepBudget::Parse(std::string(text)).status());
    p.tokens_per_step_schedule = std::string(text);
    return Status::OK();
  };
  return std::move(r).Py("-");
}

}  // namespace

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
    // Steps counted in tokens (issue 45; docs/plan.md, "Balanced steps").
    t.push_back(
        SizeOption<P>("tokens_per_step",
                      "Steps counted in tokens: the global token budget of a step (e.g. "
                      "4M); each batch is then one microbatch; 0 = steps of batch_size rows",
                      &P::tokens_per_step, CountOf("tokens_per_step"), OptionKind::kCount)
            .Cli("--tokens-per-step")
            .InState(TokenSteps));
    t.push_back(WholeOption<P>("microbatches",
                               "With tokens_per_step: the least microbatches per rank per step",
                               &P::microbatches, 1)
                    .Cli("--microbatches")
                    .InState(TokenSteps));
    t.push_back(WholeOption<P>("max_tokens_per_microbatch",
                               "With tokens_per_step: tokens per microbatch (one row); 0 = seq_len",
                               &P::max_tokens_per_microbatch)
                    .Cli("--max-tokens-per-microbatch")
                    .InState(TokenSteps));
    t.push_back(ChoiceOption<P>("balance",
                                "With tokens_per_step: tokens | attention | none (what ranks are "
                                "balanced by; attention needs model)",
                                &P::balance, {"tokens", "attention", "none"}, BalanceModeName,
                                ParseBalanceMode)
                    .Cli("--balance")
                    .InState(TokenSteps));
    t.push_back(ScheduleOption());
    t.push_back(TextOption<P>("model",
                              "balance=attention: a model directory or its config.json (the "
                              "cost a·L + b·L² from its shape), or numbers 'a,b[,c]'",
                              &P::model)
                    .Cli("--model-config"));
    t.push_back(OtherOption<P>("step_cost",
                               "The cost a·L + b·L² + c that model= resolves to (the loader and "
                               "the CLI read the file)")
                    .Py("-"));
    return t;
  }();
  return table;
}

}  // namespace stoker
