// Loader::Open: datasets by path or TokenSource -> plan -> engine. Kept apart from loader.cc so
// that code using only hand-made planners does not link the plan and the format readers.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include "cache/cache_defaults.h"
#include "common/env.h"
#include "common/uri.h"
#include "format/open_token_source.h"
#include "loader/cache_lookahead.h"
#include "loader/loader_impl.h"
#include "loader/mixture_spec.h"
#include "loader/model_cost.h"
#include "loader/piece_lookahead.h"
#include "loader/planned_dataset.h"
#include "loader/remote_options.h"
#include "plan/plan_batch_planner.h"
#include "plan/token_step_planner.h"
#include "plan/token_steps_mixture.h"
#include "stoker/loader.h"

namespace stoker {

RemoteDatasetOptions RemoteOptionsFor(const LoaderOptions& options) {
  RemoteDatasetOptions ro;
  // Global shuffle reads one document here and one there: fetching whole parts would read many
  // times the bytes used. Block shuffle and source order reread each part many times.
  // Under global shuffle, whole shards through the cache when they all fit its budget (every
  // epoch reads every shard), exact ranges otherwise, with a warning: request latency then bounds
  // delivery (docs/cache.md, "Global shuffle over remote data").
  ro.reads = options.shuffle == ShuffleMode::kGlobal ? RemoteReads::kExact : RemoteReads::kParts;
  ro.whole_shards_if_they_fit = true;
  ro.keep_indexes_bytes = kRangedIndexBytesOpen;  // no shard reopened per document read
  ro.warn_if_ranged = true;
  ro.max_open_shards = std::max<uint64_t>(8, 2 * options.block_shards);
  ro.cache_dir = cache::ResolveCacheDir(options.cache_dir);
  ro.cache_size_bytes = options.cache_size_bytes;
  return ro;
}

namespace {

// The name a mixture's checkpoint records for a dataset opened by `path` when no mixture file
// names it: a local path made absolute and normal (so that "data/a" and "x/../data/a" from
// another directory are one dataset), a URI as given.
std::string CursorName(const std::string& path) {
  if (path.empty() || !UriScheme(path).empty()) return path;
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.lexically_normal().string();
}

// One line per dataset whose long documents were dropped or truncated (never silent).
void ReportLongDocuments(const std::string& name, const LongDocumentCounts& c, uint64_t seq_len) {
  if (c.dropped > 0) {
    std::fprintf(stderr,
                 "stoker: %s: %llu document(s) longer than seq_len %llu left out "
                 "(long_documents=drop; \"truncate\" keeps their head)\n",
                 name.c_str(), static_cast<unsigned long long>(c.dropped),
                 static_cast<unsigned long long>(seq_len));
  }
  if (c.truncated > 0) {
    std::fprintf(stderr,
                 "stoker: %s: %llu document(s) longer than seq_len %llu truncated to their head "
                 "(%llu of them left with no trained token, left out)\n",
                 name.c_str(), static_cast<unsigned long long>(c.truncated),
                 static_cast<unsigned long long>(seq_len),
                 static_cast<unsigned long long>(c.untrained));
  }
}

// Loader::Open's planner: the plan's PlanBatchPlanner (rows, states, steps, provenance) with the
// look-ahead of remote data, which the loader drives (BatchPlanner's Started, Delivered,
// Stopped): the node-local cache's shard schedule (cache_lookahead.h: at least 64 steps ahead,
// scheduled again once half of them, at least 16, are delivered) and the read-ahead of pieces of
// datasets read by one request per piece (piece_lookahead.h). Thread-safe as any BatchPlanner.
class IndexedPlanner final : public PlanBatchPlanner {
 public:
  IndexedPlanner(std::shared_ptr<const Plan> plan, uint32_t rank,
                 std::vector<std::shared_ptr<const TokenSource>> sources,
                 std::vector<std::string> paths, std::unique_ptr<loader::PieceLookAhead> pieces,
                 LongDocumentCounts long_documents, std::shared_ptr<const DocumentSkips> skips)
      : PlanBatchPlanner(std::move(plan), rank, std::move(sources), std::move(paths),
                         std::move(skips)),
        long_documents_(long_documents),
        cached_sources_(AnyCachedSource(this->sources())),
        pieces_(pieces != nullptr && pieces->active() ? std::move(pieces) : nullptr) {}

  LongDocumentCounts LongDocuments() const override { return long_documents_; }
  void Started(const PlanPosition& pos) const override {
    if (cached_sources_) {
      delivered_since_schedule_ = 0;
      scheduled_steps_ = ScheduleShardsAhead(*plan(), sources(), pos, rank());
    }
    if (pieces_) pieces_->Restart(*plan(), pos, rank());
  }
  void Delivered(const PlanPosition& next) const override {
    if (cached_sources_ &&
        ++delivered_since_schedule_ >= std::max<uint64_t>(16, scheduled_steps_ / 2)) {
      delivered_since_schedule_ = 0;
      scheduled_steps_ = ScheduleShardsAhead(*plan(), sources(), next, rank());
    }
    if (pieces_) pieces_->Delivered(*plan(), rank());
  }
  void Stopped() const override {
    if (pieces_) pieces_->Shutdown();
  }

 private:
  const LongDocumentCounts long_documents_;
  const bool cached_sources_;  // any source reads through the node-local cache
  // The consumer thread's (Started, Delivered, Stopped are called by one thread at a time).
  mutable uint64_t delivered_since_schedule_ = 0, scheduled_steps_ = 0;
  std::unique_ptr<loader::PieceLookAhead> pieces_;  // null: no dataset is read ahead
};

// Wraps the reader of each dataset read by request (TokenSource::reads_by_request) with a
// read-ahead, and returns the look-ahead that feeds them. $STOKER_READ_AHEAD_REQUESTS sets the
// requests in flight per dataset (0: no read-ahead; docs/cache.md).
Result<std::unique_ptr<loader::PieceLookAhead>> ReadPiecesAhead(
    const std::vector<std::shared_ptr<const TokenSource>>& sources,
    std::vector<std::shared_ptr<const DocumentReader>>* readers) {
  loader::PiecePrefetchOptions po;
  STOKER_ASSIGN_OR_RETURN(std::optional<uint64_t> requests,
                          EnvNumber("STOKER_READ_AHEAD_REQUESTS"));
  if (requests) po.threads = static_cast<uint32_t>(std::min<uint64_t>(*requests, 1024));
  std::vector<std::shared_ptr<loader::PiecePrefetcher>> prefetchers(sources.size());
  for (size_t d = 0; d < sources.size() && po.threads > 0; ++d) {
    if (!sources[d]->reads_by_request()) continue;
    prefetchers[d] = std::make_shared<loader::PiecePrefetcher>((*readers)[d], po);
    (*readers)[d] = loader::WithPiecePrefetch((*readers)[d], prefetchers[d]);
  }
  return std::make_unique<loader::PieceLookAhead>(std::move(prefetchers), *readers);
}

// Documents the checkpoint quarantines (`stoker resume-edit --skip-documents`): named by dataset
// name or path, shard and record, as `stoker trace` prints them. Null when it quarantines none.
Result<std::shared_ptr<const DocumentSkips>> ResolveSkips(
    const PlanState* resume, const std::vector<std::string>& names,
    const std::vector<std::shared_ptr<const TokenSource>>& sources,
    const std::vector<std::string>& paths) {
  if (resume == nullptr) return std::shared_ptr<const DocumentSkips>();
  Result<std::shared_ptr<const DocumentSkips>> resolved =
      DocumentSkips::ForState(resume->skip_documents, names, sources, paths);
  if (!resolved.ok()) return resolved.status().WithContext("loader: resuming the checkpoint");
  return std::move(resolved).value();
}

// Steps counted in tokens (tokens_per_step > 0): the trained targets of a piece from its
// dataset's loss mask for chat data (the step's global_trained_tokens); null when no dataset has
// one (the planner counts targets within each document).
TokenStepPlanner::TrainedTargets TrainedTargetsOf(
    std::vector<std::shared_ptr<const DocumentReader>> readers) {
  if (std::none_of(readers.begin(), readers.end(),
                   [](const auto& r) { return r->has_loss_mask(); })) {
    return nullptr;
  }
  return [readers](const RowPiece& p) -> Result<uint64_t> {
    const std::shared_ptr<const DocumentReader>& reader = readers[p.dataset];
    const uint64_t length = reader->FindDocumentLength(p.document).value_or(p.offset + p.length);
    const uint64_t end = std::min(length, p.offset + p.length + 1);  // targets [offset + 1, end)
    if (end <= p.offset + 1) return uint64_t{0};
    if (!reader->has_loss_mask()) return end - p.offset - 1;
    std::vector<uint8_t> mask(end - p.offset - 1);
    STOKER_RETURN_IF_ERROR(
        reader->ReadLossMask(p.document, p.offset + 1, mask.size(), mask.data())
            .WithContext("the loss mask of document " + std::to_string(p.document)));
    return static_cast<uint64_t>(std::count(mask.begin(), mask.end(), uint8_t{1}));
  };
}

// What Loader::Open hands the engine for steps counted in tokens.
struct TokenStepsOpen {
  std::shared_ptr<const TokenStepPlanner> planner;
  LoaderOptions engine_options;
  PlanPosition start;
};

Result<TokenStepsOpen> PrepareTokenSteps(const LoaderOptions& options, PlanDataset dataset,
                                         const std::shared_ptr<const DocumentReader>& reader,
                                         const std::shared_ptr<const TokenSource>& source,
                                         const std::string& path, const PlanState* resume) {
  STOKER_ASSIGN_OR_RETURN(PlanOptions plan_options, WithModelCost(PlanOptionsFor(options)));
  STOKER_ASSIGN_OR_RETURN(
      std::unique_ptr<TokenStepPlanner> owned,
      TokenStepPlanner::Create(dataset.lengths, plan_options, nullptr, TrainedTargetsOf({reader})));
  // Provenance names each microbatch's pieces; quarantined documents leave every microbatch.
  owned->SetProvenance(
      std::make_shared<const ProvenanceMap>(ProvenanceMap::ForSources({source}, {path})));
  STOKER_ASSIGN_OR_RETURN(std::shared_ptr<const DocumentSkips> skips,
                          ResolveSkips(resume, {}, {source}, {path}));
  owned->SetDocumentSkips(std::move(skips));
  TokenStepsOpen out;
  out.planner = std::move(owned);
  if (resume != nullptr) {
    Result<PlanPosition> restored = out.planner->RestorePosition(*resume);
    if (!restored.ok()) return restored.status().WithContext("loader: resuming the checkpoint");
    out.start = *restored;
  }
  // Every batch is one microbatch: one row of the microbatch budget.
  out.engine_options = options;
  out.engine_options.seq_len = out.planner->steps().budget();
  out.engine_options.batch_size = 1;
  return out;
}

// Steps counted in tokens over a mixture (plan/token_steps_mixture.h): the mixture's row plan
// decides the documents, the token-step windows cut its rows; an edited mixture continues.
Result<TokenStepsOpen> PrepareMixtureTokenSteps(
    const LoaderOptions& options, std::vector<PlanDataset> datasets, std::vector<std::string> names,
    const std::vector<std::shared_ptr<const DocumentReader>>& readers,
    const std::vector<std::shared_ptr<const TokenSource>>& sources,
    const std::vector<std::string>& paths, const PlanState* resume) {
  STOKER_ASSIGN_OR_RETURN(PlanOptions plan_options, WithModelCost(PlanOptionsFor(options)));
  if (plan_options.dataset_names.empty()) plan_options.dataset_names = std::move(names);
  const std::vector<std::string> dataset_names = plan_options.dataset_names;
  // The row plan resumes at the position alone; the quarantine is set on the planner below (it
  // removes pieces only, so positions stand).
  PlanState at_position;
  const PlanState* restore_at = resume;
  if (resume != nullptr && !resume->skip_documents.empty()) {
    at_position = *resume;
    at_position.skip_documents.clear();
    restore_at = &at_position;
  }
  Result<MixtureTokenSteps> opened =
      OpenMixtureTokenSteps(std::move(datasets), plan_options, restore_at,
                            TrainedTargetsOf(readers), SharedWindowCounter());
  if (!opened.ok()) {
    return resume == nullptr ? opened.status().WithContext("loader")
                             : opened.status().WithContext("loader: resuming the checkpoint");
  }
  if (!opened->summary.empty()) {
    std::fprintf(stderr, "stoker: the checkpoint's mixture differs from this one; continuing:\n%s",
                 opened->summary.c_str());
  }
  // Provenance names each microbatch's pieces; quarantined documents leave every microbatch (a
  // quarantine removes pieces only, so the restored position stands).
  opened->planner->SetProvenance(
      std::make_shared<const ProvenanceMap>(ProvenanceMap::ForSources(sources, paths)));
  STOKER_ASSIGN_OR_RETURN(std::shared_ptr<const DocumentSkips> skips,
                          ResolveSkips(resume, dataset_names, sources, paths));
  opened->planner->SetDocumentSkips(std::move(skips));
  TokenStepsOpen out;
  out.planner = opened->planner;
  out.start = opened->start;
  out.engine_options = options;
  out.engine_options.seq_len = opened->planner->steps().budget();
  out.engine_options.batch_size = 1;
  return out;
}

}  // namespace

Result<std::unique_ptr<Loader>> Loader::Open(std::vector<LoaderDataset> datasets,
                                             const LoaderOptions& options,
                                             const PlanState* resume) {
  STOKER_RETURN_IF_ERROR(ValidateLoaderOptions(options));
  if (datasets.empty()) return InvalidArgument("loader: no dataset given");
  std::vector<std::shared_ptr<const TokenSource>> sources;
  std::vector<std::shared_ptr<const DocumentReader>> readers;
  std::vector<PlanDataset> plan_datasets;
  LongDocumentCounts long_total;
  std::vector<std::string> paths;
  // The cache budget that remote datasets read whole through it have claimed so far: a mixture's
  // datasets share one cache, so each fits only in what the ones before it left.
  uint64_t claimed = 0;
  const bool token_steps = options.tokens_per_step > 0;
  // Steps counted in tokens: a document longer than a microbatch is what long_documents treats.
  const uint64_t row_len = !token_steps ? options.seq_len
                           : options.max_tokens_per_microbatch > 0
                               ? options.max_tokens_per_microbatch
                               : options.seq_len;
  for (LoaderDataset& d : datasets) {
    paths.push_back(d.path);
    std::shared_ptr<const TokenSource> source = d.source;
    if (!source) {
      RemoteDatasetOptions remote = RemoteOptionsFor(options);
      remote.budget_claimed_bytes = claimed;
      Result<std::unique_ptr<TokenSource>> opened = OpenTokenSource(d.path, remote);
      if (!opened.ok()) return opened.status().WithContext("loader: opening " + d.path);
      source = std::move(opened).value();
      if (source->caches_shards() && !source->reads_by_request()) {
        for (uint64_t s = 0; s < source->num_shards(); ++s) {
          const TokenSource::ShardBytes b = source->shard_bytes(s);
          claimed += b.bin + b.idx;
        }
      }
    }
    STOKER_ASSIGN_OR_RETURN(
        PlannedDataset planned,
        PreparePlannedDataset(source, RemoteOptionsFor(options),
                              d.path.empty() ? source->path() : d.path, d.weight, row_len,
                              // Token steps place whole documents (pieces only of long ones).
                              token_steps ? PackMode::kBestFit : options.pack,
                              options.long_documents, "loader: " + d.path));
    ReportLongDocuments(planned.plan.lengths->name, planned.long_documents, row_len);
    long_total.dropped += planned.long_documents.dropped;
    long_total.truncated += planned.long_documents.truncated;
    long_total.untrained += planned.long_documents.untrained;
    readers.push_back(std::move(planned.reader));
    plan_datasets.push_back(std::move(planned.plan));
    sources.push_back(std::move(source));
  }
  STOKER_RETURN_IF_ERROR(CheckSameTokenizer(sources, paths).WithContext("loader"));
  if (token_steps && options.cross_document_targets) {
    return InvalidArgument(
        "loader: tokens_per_step does not go with cross_document_targets: a token step places "
        "documents into microbatches by cost across its whole window, so the document after "
        "another in a microbatch is an arbitrary one of the window, not its neighbour in the "
        "corpus, and the step's global_trained_tokens (the same on every rank, with no "
        "communication) would depend on how the slots were dealt; train cross-document targets "
        "on fixed rows (leave tokens_per_step out)");
  }
  // A mixture, or one dataset with a batch-size schedule (over its row plan's global rows).
  if (token_steps && (plan_datasets.size() > 1 || !options.tokens_per_step_schedule.empty())) {
    std::vector<std::string> names;
    for (const std::string& p : paths) names.push_back(CursorName(p));
    STOKER_ASSIGN_OR_RETURN(
        TokenStepsOpen t,
        PrepareMixtureTokenSteps(options, std::move(plan_datasets), std::move(names), readers,
                                 sources, paths, resume));
    return OpenEngine(std::move(t.planner), std::move(readers), t.engine_options, t.start);
  }
  if (token_steps) {
    STOKER_ASSIGN_OR_RETURN(TokenStepsOpen t,
                            PrepareTokenSteps(options, std::move(plan_datasets[0]), readers[0],
                                              sources[0], paths[0], resume));
    return OpenEngine(std::move(t.planner), std::move(readers), t.engine_options, t.start);
  }
  PlanOptions plan_options = PlanOptionsFor(options);
  if (plan_options.dataset_names.empty() && paths.size() > 1) {
    for (const std::string& p : paths) plan_options.dataset_names.push_back(CursorName(p));
  }
  STOKER_ASSIGN_OR_RETURN(
      std::unique_ptr<Plan> plan_owned,
      Plan::Create(std::move(plan_datasets), plan_options, SharedWindowCounter()));
  std::shared_ptr<const Plan> plan(std::move(plan_owned));
  if (!plan->HasStep({0, 0})) {  // not steps_per_epoch: that would pack a whole bestfit epoch
    return InvalidArgument("loader: the plan yields no full batch of " +
                           std::to_string(options.batch_size) + " rows per rank (world size " +
                           std::to_string(options.world_size) + ")");
  }
  PlanPosition start;
  if (resume != nullptr && resume->fingerprint != plan->fingerprint() && plan->num_datasets() > 1) {
    // An edited mixture (docs/plan.md, "Edits on resume"): each dataset continues where the
    // checkpoint says it stopped.
    Result<Plan::Continued> continued = plan->ContinueFrom(*resume);
    if (!continued.ok()) return continued.status().WithContext("loader: resuming the checkpoint");
    std::fprintf(stderr, "stoker: the checkpoint's mixture differs from this one; continuing:\n%s",
                 continued->summary.c_str());
    plan = std::move(continued->plan);
    start = continued->position;
  } else if (resume != nullptr) {
    STOKER_ASSIGN_OR_RETURN(start, plan->Restore(*resume));
  }
  STOKER_ASSIGN_OR_RETURN(std::shared_ptr<const DocumentSkips> skips,
                          ResolveSkips(resume, plan_options.dataset_names, sources, paths));
  // Datasets read by one request per piece: their pieces are fetched ahead, many at once, and
  // the workers take them from memory (docs/cache.md, "Global shuffle over remote data").
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<loader::PieceLookAhead> pieces,
                          ReadPiecesAhead(sources, &readers));
  // Remote datasets behind a cache, or read by request: the planner's look-ahead schedules the
  // first steps from `start` as the engine starts, and follows delivery (and Restore).
  auto planner = std::make_shared<IndexedPlanner>(std::move(plan), options.rank, std::move(sources),
                                                  std::move(paths), std::move(pieces), long_total,
                                                  std::move(skips));
  // Steps skipped on resume: the planner serves none of their rows (state_skips.h).
  if (resume != nullptr) planner->SetStateEdits(*resume);
  return OpenEngine(std::move(planner), std::move(readers), options, start);
}

}  // namespace stoker
