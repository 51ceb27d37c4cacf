// `stoker plan`: prints the deterministic plan (rows of every step of one rank), or its packing and
// shuffle statistics, and keeps a resumable position in a state file.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "common/file_util.h"
#include "common/progress.h"
#include "loader/planned_dataset.h"
#include "number_flags.h"
#include "plan/document_skips.h"
#include "plan/mixture_file.h"
#include "plan/plan_batch_planner.h"
#include "plan/state_skips.h"
#include "plan_flags.h"
#include "plan_token_steps.h"
#include "stoker/plan.h"
#include "stoker/token_source.h"

namespace stoker::cli {
namespace {

struct PlanArgs {
  PlanFlags plan;
  uint64_t epoch = 0;
  uint64_t start_step = 0;
  std::optional<uint64_t> steps;
  std::string state_file;
  bool force = false;
  bool json = false;
  bool stats = false;
};

// The position to start from; a state file of an edited mixture replaces *plan_ptr with the plan
// that continues it (docs/plan.md, "Edits on resume").
Result<PlanPosition> StartPosition(const PlanArgs& a, std::unique_ptr<Plan>* plan_ptr) {
  const Plan& plan = **plan_ptr;
  if (!a.state_file.empty() && PathExists(a.state_file)) {
    STOKER_ASSIGN_OR_RETURN(std::string text, ReadFileToString(a.state_file));
    Result<PlanState> state = PlanState::FromJson(text);
    if (!state.ok()) return state.status().WithContext("state file " + a.state_file);
    if (state->fingerprint != plan.fingerprint() && plan.num_datasets() > 1 && !a.force) {
      Result<Plan::Continued> continued = plan.ContinueFrom(*state);
      if (!continued.ok()) return continued.status().WithContext("state file " + a.state_file);
      std::fprintf(stderr, "plan: the state's mixture differs from this one; continuing:\n%s",
                   continued->summary.c_str());
      *plan_ptr = std::move(continued->plan);
      return continued->position;
    }
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

// The run's global rows, when --total-tokens or --total-steps gives it.
std::optional<uint64_t> RunRows(const PlanFlags& f, const Plan& plan) {
  if (f.total_steps) return *f.total_steps * plan.global_batch_rows();
  if (f.total_tokens.empty()) return std::nullopt;
  Result<uint64_t> tokens = plan::ParseCount(f.total_tokens);
  if (!tokens.ok()) return std::nullopt;
  return (*tokens + plan.options().seq_len - 1) / plan.options().seq_len;
}

// A weight as the stats print it: %g ("1", "0.7", "0.333333").
std::string FormatWeight(double w) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", w);
  return text;
}

// Each phase of a mixture schedule: per dataset its rows, share, epochs and tokens (row capacity,
// rows * seq_len) over the phase. The last phase is counted to the run's end when it is known.
nlohmann::json PhaseStats(const Plan& plan, const PlanFlags& f) {
  nlohmann::json phases = nlohmann::json::array();
  const std::vector<MixturePhase>& ph = plan.options().phases;
  const uint64_t epoch_rows = plan.rows_in_epoch(0);  // constant for a mixture
  auto at = [&](uint64_t g) { return PlanPosition{g / epoch_rows, g % epoch_rows}; };
  const std::optional<uint64_t> run_rows = RunRows(f, plan);
  uint64_t begin = 0;
  for (size_t p = 0; p < ph.size(); ++p) {
    uint64_t end = ph[p].end_row;
    if (end == UINT64_MAX && run_rows) end = std::max(*run_rows, begin);
    nlohmann::json j = {{"phase", p}, {"first_row", begin}};
    if (end == UINT64_MAX) {
      j["end_row"] = nullptr;  // open-ended: no run length given
      phases.push_back(std::move(j));
      break;
    }
    j["end_row"] = end;
    const std::vector<uint64_t> r0 = plan.DatasetRowsBefore(at(begin));
    const std::vector<uint64_t> r1 = plan.DatasetRowsBefore(at(end));
    const std::vector<double> e0 = plan.DatasetEpochs(at(begin));
    const std::vector<double> e1 = plan.DatasetEpochs(at(end));
    double wsum = 0, esum = 0;
    for (double w : ph[p].weights) wsum += w;
    for (double w : ph[p].end_weights) esum += w;
    nlohmann::json ds = nlohmann::json::array();
    for (size_t k = 0; k < r0.size(); ++k) {
      const uint64_t rows = r1[k] - r0[k];
      nlohmann::json d = {
          {"name", k < f.mixture_names.size() ? f.mixture_names[k] : std::to_string(k)},
          {"weight", ph[p].weights[k] / wsum},
          {"rows", rows},
          {"share", end > begin ? static_cast<double>(rows) / static_cast<double>(end - begin) : 0},
          {"epochs", e1[k] - e0[k]},
          {"tokens", rows * plan.options().seq_len}};
      if (!ph[p].end_weights.empty()) d["end_weight"] = ph[p].end_weights[k] / esum;
      ds.push_back(std::move(d));
    }
    j["datasets"] = std::move(ds);
    phases.push_back(std::move(j));
    begin = end;
  }
  return phases;
}

void PrintPhaseStats(const nlohmann::json& phases) {
  for (const auto& p : phases) {
    if (p["end_row"].is_null()) {
      std::printf(
          "phase %llu: from global row %llu to the end (give --total-tokens or "
          "--total-steps to count it)\n",
          static_cast<unsigned long long>(p["phase"].get<uint64_t>()),
          static_cast<unsigned long long>(p["first_row"].get<uint64_t>()));
      continue;
    }
    std::printf("phase %llu: global rows [%llu, %llu)\n",
                static_cast<unsigned long long>(p["phase"].get<uint64_t>()),
                static_cast<unsigned long long>(p["first_row"].get<uint64_t>()),
                static_cast<unsigned long long>(p["end_row"].get<uint64_t>()));
    for (const auto& d : p["datasets"]) {
      char w[64];
      if (d.contains("end_weight")) {
        std::snprintf(w, sizeof w, "%.4f -> %.4f", d["weight"].get<double>(),
                      d["end_weight"].get<double>());
      } else {
        std::snprintf(w, sizeof w, "%.4f", d["weight"].get<double>());
      }
      std::printf("  %-16s weight %s: share %.4f, %llu rows (%s tokens), %.3f epochs\n",
                  d["name"].get<std::string>().c_str(), w, d["share"].get<double>(),
                  static_cast<unsigned long long>(d["rows"].get<uint64_t>()),
                  FormatCount(d["tokens"].get<uint64_t>()).c_str(), d["epochs"].get<double>());
    }
  }
}

// Per dataset: whether it has a loss mask, its trained targets and share, what --long-documents
// changed; and the epoch's trained-token share.
Result<nlohmann::json> TrainedStats(const Plan& plan, const std::vector<PlannedDataset>& opened,
                                    const PackingStats& p, uint64_t epoch) {
  STOKER_ASSIGN_OR_RETURN(TrainedShare t,
                          ComputeTrainedShare(plan, opened, p.real_token_share(), epoch));
  nlohmann::json out = nlohmann::json::array();
  for (size_t k = 0; k < opened.size(); ++k) {
    const LongDocumentCounts& c = opened[k].long_documents;
    out.push_back(
        {{"loss_mask", opened[k].reader->has_loss_mask()},
         {"trained_targets", t.targets[k]},
         {"trained_share_of_real_tokens", t.tokens[k] ? double(t.targets[k]) / t.tokens[k] : 0.0},
         {"long_documents_dropped", c.dropped + c.untrained},
         {"long_documents_truncated", c.truncated - c.untrained}});
  }
  return nlohmann::json{{"trained_token_share", t.share}, {"datasets", out}};
}

void PrintStats(const Plan& plan, const std::vector<PlanDataset>& datasets,
                const std::vector<PlannedDataset>& opened, uint64_t epoch, const PlanFlags& flags,
                bool json) {
  PackingStats p = plan.ComputePackingStats(epoch);
  Result<nlohmann::json> trained = TrainedStats(plan, opened, p, epoch);
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
                          {"trained_token_share",
                           trained.ok() ? (*trained)["trained_token_share"] : nlohmann::json()},
                          {"padding_share", p.padding_share()}}},
                        {"datasets", nlohmann::json::array()}};
  const std::vector<MixturePhase>& phases = plan.options().phases;
  for (uint32_t k = 0; k < datasets.size(); ++k) {
    ShuffleStats s = plan.ComputeShuffleStats(k, epoch);
    // With phases the datasets' own weights are unused (1 each): each phase's weight instead,
    // normalised as the phase lines give them; a ramp as [start, end].
    nlohmann::json weight = datasets[k].weight;
    if (!phases.empty()) {
      weight = nlohmann::json::array();
      for (const MixturePhase& ph : phases) {
        double sum = 0, end_sum = 0;
        for (double w : ph.weights) sum += w;
        for (double w : ph.end_weights) end_sum += w;
        if (ph.end_weights.empty()) {
          weight.push_back(ph.weights[k] / sum);
        } else {
          weight.push_back({ph.weights[k] / sum, ph.end_weights[k] / end_sum});
        }
      }
    }
    out["datasets"].push_back(
        {{"name", datasets[k].lengths->name},
         {phases.empty() ? "weight" : "phase_weights", weight},
         {"epochs_in_this_plan_epoch", epochs_at_end[k] - epochs_at_start[k]},
         {"shuffle",
          {{"mode", ShuffleModeName(plan.options().shuffle)},
           {"mean_source_distance", s.mean_source_distance},
           {"mean_shards_per_1000_documents", s.mean_shards_per_window},
           {"shards", datasets[k].lengths->shard_first_document.empty()
                          ? 1
                          : datasets[k].lengths->shard_first_document.size() - 1}}}});
    if (trained.ok()) out["datasets"].back().update((*trained)["datasets"][k]);
  }
  if (!trained.ok()) {
    std::fprintf(stderr, "plan: trained-token share not computed: %s\n",
                 trained.status().ToString().c_str());
  }
  if (!plan.options().phases.empty()) out["phases"] = PhaseStats(plan, flags);
  if (json) {
    std::printf("%s\n", out.dump().c_str());
    return;
  }
  // A mixture with the run's length: its epoch is the run, and every figure below covers it.
  const bool run = plan.num_datasets() > 1 && plan.options().run_rows > 0;
  std::printf("plan epoch %llu%s: %llu rows, %llu steps of %llu rows, fingerprint %s\n",
              static_cast<unsigned long long>(epoch),
              run ? " (the run: --total-tokens / --total-steps)" : "",
              static_cast<unsigned long long>(plan.rows_in_epoch(epoch)),
              static_cast<unsigned long long>(plan.steps_per_epoch(epoch)),
              static_cast<unsigned long long>(plan.global_batch_rows()),
              plan.fingerprint().c_str());
  // Documents --long-documents left out have length 0 in the plan: they are counted on their
  // dataset's line, not as empty documents. Tokens are truncated only by --pack pad (the
  // documents --long-documents truncate cut are counted on their dataset's line).
  uint64_t left_out = 0;
  for (const auto& d : out["datasets"]) {
    if (d.contains("long_documents_dropped"))
      left_out += d["long_documents_dropped"].get<uint64_t>();
  }
  const uint64_t empty = p.empty_documents - std::min<uint64_t>(left_out, p.empty_documents);
  std::string extra;
  if (plan.options().pack == PackMode::kPad) {
    extra += ", " + std::to_string(p.truncated_tokens) + " tokens truncated (--pack pad)";
  }
  if (empty > 0) extra += ", " + std::to_string(empty) + " empty document(s)";
  std::printf(
      "packing (%s): real tokens %.2f%%, trained tokens %.2f%%, padding %.2f%%, %llu of %llu "
      "documents split%s\n",
      std::string(PackModeName(plan.options().pack)).c_str(), 100 * p.real_token_share(),
      trained.ok() ? 100 * (*trained)["trained_token_share"].get<double>() : 0.0,
      100 * p.padding_share(), static_cast<unsigned long long>(p.documents_split),
      static_cast<unsigned long long>(p.documents), extra.c_str());
  for (const auto& d : out["datasets"]) {
    std::string weight;
    if (d.contains("weight")) {
      weight = "weight " + FormatWeight(d["weight"].get<double>());
    } else {
      weight = "weight by phase ";
      for (size_t p = 0; p < d["phase_weights"].size(); ++p) {
        const auto& w = d["phase_weights"][p];
        weight += (p ? ", " : "") + (w.is_array() ? FormatWeight(w[0].get<double>()) + " -> " +
                                                        FormatWeight(w[1].get<double>())
                                                  : FormatWeight(w.get<double>()));
      }
    }
    std::printf(
        "dataset %s (%s): %.3f epochs; shuffle %s: mean source distance %.1f "
        "documents, %.2f distinct shards (of %llu) per 1,000 documents\n",
        d["name"].get<std::string>().c_str(), weight.c_str(),
        d["epochs_in_this_plan_epoch"].get<double>(),
        d["shuffle"]["mode"].get<std::string>().c_str(),
        d["shuffle"]["mean_source_distance"].get<double>(),
        d["shuffle"]["mean_shards_per_1000_documents"].get<double>(),
        static_cast<unsigned long long>(d["shuffle"]["shards"].get<uint64_t>()));
    if (d.contains("long_documents_dropped") && d["long_documents_dropped"].get<uint64_t>() > 0) {
      std::printf("  %llu document(s) longer than --seq-len left out (--long-documents)\n",
                  static_cast<unsigned long long>(d["long_documents_dropped"].get<uint64_t>()));
    }
    if (d.contains("long_documents_truncated") &&
        d["long_documents_truncated"].get<uint64_t>() > 0) {
      std::printf("  %llu document(s) truncated to their head (--long-documents truncate)\n",
                  static_cast<unsigned long long>(d["long_documents_truncated"].get<uint64_t>()));
    }
  }
  if (out.contains("phases")) PrintPhaseStats(out["phases"]);
}

int RunPlan(const PlanArgs& args) {
  Result<PlanOptions> options = BuildPlanOptions(args.plan);
  if (!options.ok()) return ReportError("plan", options.status());
  std::vector<PlanDataset> datasets;
  std::vector<PlannedDataset> opened;
  for (const std::string& arg : args.plan.datasets) {
    Result<PlannedDataset> ds = OpenPlanDataset(arg, args.plan);
    if (!ds.ok()) return ReportError("plan", ds.status());
    datasets.push_back(ds->plan);
    opened.push_back(std::move(*ds));
  }
  if (options->tokens_per_step == 0 && !options->tokens_per_step_schedule.empty()) {
    return ReportError("plan", InvalidArgument("the mixture file's \"tokens_per_step\" schedule "
                                               "needs steps counted in tokens: give "
                                               "--tokens-per-step too"));
  }
  if (options->tokens_per_step > 0) {  // steps counted in tokens (plan_token_steps.h)
    return RunTokenStepPlan(*options, datasets, args.epoch, args.steps, args.stats, args.json);
  }
  // The edits of the state file (`stoker resume-edit`): its dropped datasets leave the mixture
  // before it is planned (the resume below then continues the others), its skips are jumped over.
  StateEdits edits;
  std::optional<DocumentSkips> doc_skips;  // the documents the state quarantines
  if (!args.state_file.empty() && PathExists(args.state_file)) {
    Result<std::string> text = ReadFileToString(args.state_file);
    if (!text.ok()) return ReportError("plan", text.status());
    Result<StateEdits> read = ReadStateEdits(*text);
    if (!read.ok())
      return ReportError("plan", read.status().WithContext("state file " + args.state_file));
    edits = std::move(read).value();
    std::vector<std::string> names = options->dataset_names;
    for (size_t k = names.size(); k < datasets.size(); ++k) {
      const std::string& name = datasets[k].lengths->name;
      names.push_back(name.find("://") != std::string::npos
                          ? name
                          : std::filesystem::absolute(name).lexically_normal().string());
    }
    Result<PlanState> state = PlanState::FromJson(*text);
    if (state.ok() && !state->skip_documents.empty()) {
      std::vector<ProvenanceDataset> shards;
      std::vector<std::string> kept;
      for (size_t k = 0; k < opened.size(); ++k) {
        if (std::find(edits.drops.begin(), edits.drops.end(), names[k]) != edits.drops.end()) {
          continue;
        }
        shards.push_back(ProvenanceDataset::FromSource(*opened[k].source));
        kept.push_back(names[k]);
      }
      Result<DocumentSkips> resolved = DocumentSkips::Resolve(state->skip_documents, kept, shards);
      if (!resolved.ok()) {
        return ReportError("plan", resolved.status().WithContext("state file " + args.state_file));
      }
      doc_skips = std::move(resolved).value();
    }
    Status st = DropDatasets(edits.drops, names, &datasets, &*options);
    if (!st.ok()) return ReportError("plan", st.WithContext("state file " + args.state_file));
  }
  Result<std::unique_ptr<Plan>> plan = Plan::Create(datasets, *options, SharedWindowCounter());
  if (!plan.ok()) return ReportError("plan", plan.status());
  if (args.stats) {
    PrintStats(**plan, datasets, opened, args.epoch, args.plan, args.json);
    return kExitOk;
  }
  Result<PlanPosition> start = StartPosition(args, &*plan);
  if (!start.ok()) return ReportError("plan", start.status());
  // The plan as the loader's planner serves it: the state's skips honoured (a step reaching into
  // one serves padding from its first row on), its quarantined documents left out.
  PlanBatchPlanner planner(std::shared_ptr<const Plan>(std::move(*plan)), options->rank, {}, {},
                           doc_skips ? std::make_shared<const DocumentSkips>(*doc_skips) : nullptr);
  PlanState edited;
  edited.skips = edits.skips;
  edited.drops = edits.drops;
  planner.SetStateEdits(edited);
  const Plan& p = *planner.plan();
  PlanPosition pos = planner.Normalize(*start);
  // HasStep, not steps_remaining: counting a bestfit epoch would pack all of it.
  if (!p.HasStep(pos)) {
    return ReportError("plan",
                       OutOfRange("epoch " + std::to_string(pos.epoch) +
                                  " has no step: " + std::to_string(p.rows_in_epoch(pos.epoch)) +
                                  " rows, fewer than one global batch of " +
                                  std::to_string(p.global_batch_rows()) +
                                  " rows (use --remainder pad, or a smaller batch or world size)"));
  }
  const uint64_t epoch = pos.epoch;
  for (uint64_t printed = 0; args.steps ? printed < *args.steps : pos.epoch == epoch; ++printed) {
    Batch batch;
    if (Status st = planner.BatchAt(pos, &batch); !st.ok()) return ReportError("plan", st);
    PrintBatch(batch, args.json);
    pos = planner.Advance(pos);
    if (!p.HasStep(pos)) break;
  }
  if (!args.state_file.empty()) {
    Status st = WriteFileAtomically(args.state_file, planner.MakeState(pos).ToJson() + "\n");
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
      "A state edited by `stoker resume-edit` is honoured: its skipped steps are jumped over and\n"
      "its dropped datasets left out of the mixture, as stoker.Loader does (docs/plan.md).\n"
      "RANK and WORLD_SIZE from the environment are the defaults of --rank and --world-size.\n"
      "Example: stoker plan 2:web 1:code --seq-len 2048 --batch-size 8 --pack bestfit --json");
  AddPlanFlags(sub, &args->plan);
  sub->add_option("--epoch", args->epoch, "Epoch to print (ignored when --state FILE exists)")
      ->check(WholeNumber<uint64_t>())
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
  sub->callback([args, exit_code] {
    Status st = ExpandMixtureFlag(&args->plan);
    *exit_code = st.ok() ? RunPlan(*args) : ReportError("plan", st);
  });
}

}  // namespace stoker::cli
