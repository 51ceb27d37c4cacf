// `stoker plan`: prints the deterministic plan (rows of every step of one rank), or its packing and
// shuffle statistics, and keeps a resumable position in a state file.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "stoker/cli_common.h"
#include "stoker/commands.h"
#include "stoker/number_flags.h"
#include "stoker/plan.h"
#include "stoker/token_source.h"

namespace stoker::cli {
namespace {

struct PlanArgs {
  std::vector<std::string> datasets;
  uint64_t seq_len = 0;
  uint64_t batch_size = 0;
  std::optional<uint32_t> world_size;
  std::optional<uint32_t> rank;
  uint64_t seed = 0;
  uint64_t epoch = 0;
  std::string shuffle = "global";
  std::string pack = "concat";
  std::string remainder = "drop_last";
  uint64_t block_shards = 4;
  uint64_t bestfit_window = 4096;
  uint64_t start_step = 0;
  std::optional<uint64_t> steps;
  std::string state_file;
  bool force = false;
  bool json = false;
  bool stats = false;
};

// "[WEIGHT:]PATH" -> weight and path. A prefix that is not a positive number is part of the path.
Result<PlanDataset> OpenDataset(const std::string& arg) {
  double weight = 1.0;
  std::string path = arg;
  size_t colon = arg.find(':');
  if (colon != std::string::npos && colon > 0) {
    std::string prefix = arg.substr(0, colon);
    char* end = nullptr;
    double w = std::strtod(prefix.c_str(), &end);
    if (end == prefix.c_str() + prefix.size()) {
      if (!(w > 0)) return InvalidArgument("weight '" + prefix + "' of '" + arg + "' must be > 0");
      weight = w;
      path = arg.substr(colon + 1);
    }
  }
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<TokenSource> source, OpenTokenSource(path));
  STOKER_ASSIGN_OR_RETURN(DatasetLengths lengths, DatasetLengths::FromTokenSource(*source));
  return PlanDataset{std::make_shared<const DatasetLengths>(std::move(lengths)), weight};
}

Result<PlanOptions> BuildOptions(const PlanArgs& a) {
  PlanOptions o;
  o.seq_len = a.seq_len;
  o.batch_size = a.batch_size;
  STOKER_ASSIGN_OR_RETURN(RankAndWorldSize rw, ResolveRankAndWorldSize(a.rank, a.world_size));
  o.rank = rw.rank;
  o.world_size = rw.world_size;
  o.seed = a.seed;
  STOKER_ASSIGN_OR_RETURN(o.shuffle, ParseShuffleMode(a.shuffle));
  STOKER_ASSIGN_OR_RETURN(o.pack, ParsePackMode(a.pack));
  STOKER_ASSIGN_OR_RETURN(o.remainder, ParseRemainderPolicy(a.remainder));
  o.block_shards = a.block_shards;
  o.bestfit_window = a.bestfit_window;
  return o;
}

Result<PlanPosition> StartPosition(const PlanArgs& a, const Plan& plan) {
  if (!a.state_file.empty() && PathExists(a.state_file)) {
    STOKER_ASSIGN_OR_RETURN(std::string text, ReadFileToString(a.state_file));
    Result<PlanState> state = PlanState::FromJson(text);
    if (!state.ok()) return state.status().WithContext("state file " + a.state_file);
    Result<PlanPosition> pos = plan.Restore(*state, a.force);
    if (!pos.ok()) {
      return Status(pos.status().code(), "state file " + a.state_file + ": " +
                                             pos.status().message() + " (--force continues)");
    }
    return *pos;
  }
  // Counting the steps packs a whole bestfit epoch: only done when a start step must be checked.
  uint64_t steps = a.start_step > 0 ? plan.steps_per_epoch(a.epoch) : 0;
  if (a.start_step > steps) {
    return InvalidArgument("--start-step " + std::to_string(a.start_step) + " is past the end of " +
                           "epoch " + std::to_string(a.epoch) + " (" + std::to_string(steps) +
                           " steps)");
  }
  return PlanPosition{a.epoch, a.start_step * plan.global_batch_rows()};
}

void PrintBatch(const Batch& b, bool json) {
  if (json) {
    nlohmann::json rows = nlohmann::json::array(), repeated = nlohmann::json::array();
    for (size_t i = 0; i < b.rows.size(); ++i) {
      nlohmann::json pieces = nlohmann::json::array();
      for (const RowPiece& p : b.rows[i].pieces) {
        pieces.push_back({p.dataset, p.document, p.offset, p.length});
      }
      rows.push_back(std::move(pieces));
      if (b.rows[i].repeated) repeated.push_back(i);
    }
    nlohmann::json line = {{"epoch", b.position.epoch},
                           {"step", b.step},
                           {"rank", b.rank},
                           {"first_row", b.position.rows_consumed},
                           {"rows", std::move(rows)},
                           {"repeated", std::move(repeated)}};
    std::printf("%s\n", line.dump().c_str());
    return;
  }
  uint64_t tokens = 0;
  for (const Row& r : b.rows) tokens += r.num_tokens();
  std::printf("epoch %llu step %llu rank %u: %zu rows, %llu tokens\n",
              static_cast<unsigned long long>(b.position.epoch),
              static_cast<unsigned long long>(b.step), b.rank, b.rows.size(),
              static_cast<unsigned long long>(tokens));
  for (size_t i = 0; i < b.rows.size(); ++i) {
    std::string line = "  row " + std::to_string(i) + (b.rows[i].repeated ? " (repeated):" : ":");
    for (const RowPiece& p : b.rows[i].pieces) {
      line += " [" + std::to_string(p.dataset) + " " + std::to_string(p.document) + " " +
              std::to_string(p.offset) + " " + std::to_string(p.length) + "]";
    }
    std::printf("%s\n", line.c_str());
  }
}

void PrintStats(const Plan& plan, const std::vector<PlanDataset>& datasets, uint64_t epoch,
                bool json) {
  PackingStats p = plan.ComputePackingStats(epoch);
  std::vector<double> epochs_at_end = plan.DatasetEpochs({epoch + 1, 0});
  std::vector<double> epochs_at_start = plan.DatasetEpochs({epoch, 0});
  nlohmann::json out = {{"epoch", epoch},
                        {"fingerprint", plan.fingerprint()},
                        {"rows", plan.rows_in_epoch(epoch)},
                        {"steps", plan.steps_per_epoch(epoch)},
                        {"global_batch_rows", plan.global_batch_rows()},
                        {"packing",
                         {{"mode", PackModeName(plan.options().pack)},
                          {"rows", p.rows},
                          {"real_tokens", p.real_tokens},
                          {"padding_tokens", p.padding_tokens},
                          {"truncated_tokens", p.truncated_tokens},
                          {"documents", p.documents},
                          {"empty_documents", p.empty_documents},
                          {"documents_split", p.documents_split},
                          {"real_token_share", p.real_token_share()},
                          {"padding_share", p.padding_share()}}},
                        {"datasets", nlohmann::json::array()}};
  for (uint32_t k = 0; k < datasets.size(); ++k) {
    ShuffleStats s = plan.ComputeShuffleStats(k, epoch);
    out["datasets"].push_back(
        {{"name", datasets[k].lengths->name},
         {"weight", datasets[k].weight},
         {"epochs_in_this_plan_epoch", epochs_at_end[k] - epochs_at_start[k]},
         {"shuffle",
          {{"mode", ShuffleModeName(plan.options().shuffle)},
           {"mean_source_distance", s.mean_source_distance},
           {"mean_shards_per_1000_documents", s.mean_shards_per_window},
           {"shards", datasets[k].lengths->shard_first_document.empty()
                          ? 1
                          : datasets[k].lengths->shard_first_document.size() - 1}}}});
  }
  if (json) {
    std::printf("%s\n", out.dump().c_str());
    return;
  }
  std::printf("plan epoch %llu: %llu rows, %llu steps of %llu rows, fingerprint %s\n",
              static_cast<unsigned long long>(epoch),
              static_cast<unsigned long long>(plan.rows_in_epoch(epoch)),
              static_cast<unsigned long long>(plan.steps_per_epoch(epoch)),
              static_cast<unsigned long long>(plan.global_batch_rows()),
              plan.fingerprint().c_str());
  std::printf(
      "packing (%s): real tokens %.2f%%, padding %.2f%%, %llu tokens truncated, "
      "%llu of %llu documents split, %llu empty documents\n",
      std::string(PackModeName(plan.options().pack)).c_str(), 100 * p.real_token_share(),
      100 * p.padding_share(), static_cast<unsigned long long>(p.truncated_tokens),
      static_cast<unsigned long long>(p.documents_split),
      static_cast<unsigned long long>(p.documents),
      static_cast<unsigned long long>(p.empty_documents));
  for (const auto& d : out["datasets"]) {
    std::printf(
        "dataset %s (weight %g): %.3f epochs; shuffle %s: mean source distance %.1f "
        "documents, %.2f distinct shards (of %llu) per 1,000 documents\n",
        d["name"].get<std::string>().c_str(), d["weight"].get<double>(),
        d["epochs_in_this_plan_epoch"].get<double>(),
        d["shuffle"]["mode"].get<std::string>().c_str(),
        d["shuffle"]["mean_source_distance"].get<double>(),
        d["shuffle"]["mean_shards_per_1000_documents"].get<double>(),
        static_cast<unsigned long long>(d["shuffle"]["shards"].get<uint64_t>()));
  }
}

int RunPlan(const PlanArgs& args) {
  Result<PlanOptions> options = BuildOptions(args);
  if (!options.ok()) return ReportError("plan", options.status());
  std::vector<PlanDataset> datasets;
  for (const std::string& arg : args.datasets) {
    Result<PlanDataset> ds = OpenDataset(arg);
    if (!ds.ok()) return ReportError("plan", ds.status());
    datasets.push_back(*ds);
  }
  Result<std::unique_ptr<Plan>> plan = Plan::Create(datasets, *options);
  if (!plan.ok()) return ReportError("plan", plan.status());
  if (args.stats) {
    PrintStats(**plan, datasets, args.epoch, args.json);
    return kExitOk;
  }
  Result<PlanPosition> start = StartPosition(args, **plan);
  if (!start.ok()) return ReportError("plan", start.status());
  PlanPosition pos = (*plan)->Normalize(*start);
  // HasStep, not steps_remaining: counting a bestfit epoch would pack all of it.
  if (!(*plan)->HasStep(pos)) {
    return ReportError(
        "plan", OutOfRange("epoch " + std::to_string(pos.epoch) +
                           " has no step: " + std::to_string((*plan)->rows_in_epoch(pos.epoch)) +
                           " rows, fewer than one global batch of " +
                           std::to_string((*plan)->global_batch_rows()) +
                           " rows (use --remainder pad, or a smaller batch or world size)"));
  }
  const uint64_t epoch = pos.epoch;
  for (uint64_t printed = 0; args.steps ? printed < *args.steps : pos.epoch == epoch; ++printed) {
    Result<Batch> batch = (*plan)->GetBatchAt(pos, options->rank);
    if (!batch.ok()) return ReportError("plan", batch.status());
    PrintBatch(*batch, args.json);
    pos = (*plan)->Normalize((*plan)->Advance(pos));
    if (!(*plan)->HasStep(pos)) break;
  }
  if (!args.state_file.empty()) {
    Status st = WriteFileAtomically(args.state_file, (*plan)->MakeState(pos).ToJson() + "\n");
    if (!st.ok()) return ReportError("plan", st);
  }
  return kExitOk;
}

}  // namespace

void AddPlanCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<PlanArgs>();
  auto* sub = app.add_subcommand("plan", "Print the deterministic plan: the rows of each step");
  sub->footer(
      "Each row is a list of pieces [dataset, document, offset, length] (tokens). Rows are packed\n"
      "from the datasets' document lengths, then dealt to ranks: every rank computes the same\n"
      "global rows, so every token is in exactly one row of one rank per epoch.\n"
      "--state FILE: start from the position in FILE if it exists (instead of --start-step);\n"
      "after the last printed step, write the position back. Two runs of --steps 3 --state F\n"
      "print steps 0-2, then 3-5. The state holds no world size: resume on another one works.\n"
      "RANK and WORLD_SIZE from the environment are the defaults of --rank and --world-size.\n"
      "Example: stoker plan 2:web 1:code --seq-len 2048 --batch-size 8 --pack bestfit --json");
  sub->add_option("datasets", args->datasets,
                  "[WEIGHT:]DATASET (any format `stoker inspect` reads)")
      ->required();
  sub->add_option("--seq-len", args->seq_len, "Tokens per row")
      ->required()
      ->check(WholeNumber<uint64_t>(1));
  sub->add_option("--batch-size", args->batch_size, "Rows per rank per step")
      ->required()
      ->check(WholeNumber<uint64_t>(1));
  sub->add_option("--world-size", args->world_size, "Ranks (default: $WORLD_SIZE, else 1)")
      ->check(WholeNumber<uint32_t>(1));
  sub->add_option("--rank", args->rank, "This rank (default: $RANK, else 0)")
      ->check(WholeNumber<uint32_t>());
  sub->add_option("--seed", args->seed, "Shuffle seed")
      ->check(WholeNumber<uint64_t>())
      ->capture_default_str();
  sub->add_option("--epoch", args->epoch, "Epoch to print (ignored when --state FILE exists)")
      ->check(WholeNumber<uint64_t>())
      ->capture_default_str();
  sub->add_option("--shuffle", args->shuffle, "global | block | none")
      ->check(CLI::IsMember({"global", "block", "none"}))
      ->capture_default_str();
  sub->add_option("--block-shards", args->block_shards,
                  "Shards shuffled together (--shuffle block)")
      ->check(WholeNumber<uint64_t>(1))
      ->capture_default_str();
  sub->add_option("--pack", args->pack, "concat | bestfit | pad")
      ->check(CLI::IsMember({"concat", "bestfit", "pad"}))
      ->capture_default_str();
  sub->add_option("--bestfit-window", args->bestfit_window, "Documents packed together (bestfit)")
      ->check(WholeNumber<uint64_t>(1))
      ->capture_default_str();
  sub->add_option("--remainder", args->remainder, "drop_last | pad (the last incomplete batch)")
      ->check(CLI::IsMember({"drop_last", "pad"}))
      ->capture_default_str();
  sub->add_option("--start-step", args->start_step, "First step to print")
      ->check(WholeNumber<uint64_t>())
      ->capture_default_str();
  sub->add_option("--steps", args->steps, "Steps to print (default: to the end of the epoch)")
      ->check(WholeNumber<uint64_t>(1));
  sub->add_option("--state", args->state_file, "Resume from / save the position to this file")
      ->transform(LocalFile());
  sub->add_flag("--force", args->force, "Restore a state written for a different plan");
  sub->add_flag("--json", args->json, "One JSON line per step");
  sub->add_flag("--stats", args->stats, "Print packing and shuffle statistics instead");
  sub->callback([args, exit_code] { *exit_code = RunPlan(*args); });
}

}  // namespace stoker::cli
