// Plan benchmark: how fast the plan produces rows, how long an epoch takes to plan, and how full
// the rows are, per packing mode, at seq_len 2048 and 8192.
//
// Usage: plan_benchmark [--docs N] [--dataset PATH]...
//   --docs N       documents of the synthetic log-normal dataset (default 10,000,000)
//   --dataset PATH also measure a real dataset (any format OpenTokenSource reads), e.g. the
//                  bundled corpus packed by `stoker pack data/sample/corpus.jsonl -o DIR`.
// Prints figures; asserts nothing. Single-threaded: the figures are per core.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "stoker/plan.h"
#include "stoker/token_source.h"

namespace {

using stoker::DatasetLengths;
using stoker::PackMode;
using stoker::Plan;
using stoker::PlanOptions;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Web-text-like lengths: log-normal, median 400 tokens, sigma 1.2 (mean ~820, long tail).
std::shared_ptr<const DatasetLengths> LogNormalLengths(uint64_t n) {
  std::mt19937_64 rng(2024);
  std::lognormal_distribution<double> dist(std::log(400.0), 1.2);
  auto out = std::make_shared<DatasetLengths>();
  out->name = "lognormal";
  out->document_lengths.resize(n);
  for (auto& l : out->document_lengths) l = 1 + static_cast<uint64_t>(dist(rng));
  // 1,000 shards, as a dataset of ~100 MB shards would have.
  const uint64_t shards = std::min<uint64_t>(1000, n);
  for (uint64_t s = 0; s <= shards; ++s) out->shard_first_document.push_back(n * s / shards);
  return out;
}

void Measure(const std::shared_ptr<const DatasetLengths>& lengths, uint64_t seq_len,
             PackMode pack) {
  PlanOptions o;
  o.seq_len = seq_len;
  o.pack = pack;
  o.batch_size = 64;
  o.remainder = stoker::RemainderPolicy::kPad;  // small corpora still get a step
  auto start = std::chrono::steady_clock::now();
  auto plan = Plan::Create({{lengths, 1.0}}, o);
  if (!plan.ok()) {
    std::printf("  error: %s\n", plan.status().ToString().c_str());
    return;
  }
  double create_s = Seconds(start);
  start = std::chrono::steady_clock::now();
  // The first batch packs only the first window(s): start-up and resume latency.
  auto first = (*plan)->GetBatch(0, 0, 0);
  double first_s = Seconds(start);
  if (!first.ok()) {
    std::printf("  error: %s\n", first.status().ToString().c_str());
    return;
  }
  // Counting the epoch's steps packs every window for bestfit (concat and pad know it at once).
  start = std::chrono::steady_clock::now();
  const uint64_t steps = (*plan)->steps_per_epoch(0);
  double count_s = Seconds(start);
  // Then every row of the epoch, step by step, as a single rank (world size 1) would ask.
  start = std::chrono::steady_clock::now();
  uint64_t rows = 0, tokens = 0;
  for (uint64_t step = 0; step < steps; ++step) {
    auto batch = (*plan)->GetBatch(0, step, 0);
    for (const auto& row : batch->rows) tokens += row.num_tokens();
    rows += batch->rows.size();
  }
  double rows_s = Seconds(start);
  stoker::PackingStats st = (*plan)->ComputePackingStats(0);
  std::printf(
      "  %-8s seq %5llu: real tokens %6.2f%%  rows %10llu  split docs %8llu  truncated %11llu | "
      "create %.2fs, first batch %.3fs, count steps %.2fs, all rows %.2fs = %.2f M rows/s, "
      "%.0f M tokens/s; epoch planned in %.2fs\n",
      std::string(stoker::PackModeName(pack)).c_str(), static_cast<unsigned long long>(seq_len),
      100 * st.real_token_share(), static_cast<unsigned long long>(st.rows),
      static_cast<unsigned long long>(st.documents_split),
      static_cast<unsigned long long>(st.truncated_tokens), create_s, first_s, count_s, rows_s,
      rows / rows_s / 1e6, tokens / rows_s / 1e6, create_s + first_s + count_s + rows_s);
  std::fflush(stdout);
}

void MeasureAll(const std::shared_ptr<const DatasetLengths>& lengths) {
  uint64_t tokens = 0;
  for (uint64_t l : lengths->document_lengths) tokens += l;
  std::printf("%s: %zu documents, %llu tokens (mean %.0f)\n", lengths->name.c_str(),
              lengths->document_lengths.size(), static_cast<unsigned long long>(tokens),
              static_cast<double>(tokens) / lengths->document_lengths.size());
  for (uint64_t seq_len : {2048, 8192}) {
    for (PackMode pack : {PackMode::kConcat, PackMode::kBestFit, PackMode::kPad}) {
      Measure(lengths, seq_len, pack);
    }
  }
}

// A 3:1 mixture of two datasets (the second a tenth of the first, so it repeats): rows/s through
// the interleaving, which fetches each row from its dataset's stream.
void MeasureMixture(const std::shared_ptr<const DatasetLengths>& big, PackMode pack) {
  auto small = std::make_shared<DatasetLengths>();
  small->name = "small";
  small->document_lengths.assign(big->document_lengths.begin(),
                                 big->document_lengths.begin() + big->document_lengths.size() / 10);
  PlanOptions o;
  o.seq_len = 2048;
  o.pack = pack;
  o.batch_size = 64;
  auto start = std::chrono::steady_clock::now();
  auto plan = Plan::Create({{big, 3.0}, {small, 1.0}}, o);
  if (!plan.ok()) return;
  uint64_t rows = 0, tokens = 0;
  uint64_t steps = std::min<uint64_t>((*plan)->steps_per_epoch(0), 20000);
  for (uint64_t step = 0; step < steps; ++step) {
    auto batch = (*plan)->GetBatch(0, step, 0);
    for (const auto& row : batch->rows) tokens += row.num_tokens();
    rows += batch->rows.size();
  }
  double s = Seconds(start);
  std::vector<double> epochs = (*plan)->DatasetEpochs({1, 0});
  std::printf(
      "  mixture 3:1 %-8s seq 2048: %llu rows in %.2fs = %.2f M rows/s, %.0f M tokens/s; "
      "one mixture epoch = %.3f epochs of the large, %.3f of the small dataset\n",
      std::string(stoker::PackModeName(pack)).c_str(), static_cast<unsigned long long>(rows), s,
      rows / s / 1e6, tokens / s / 1e6, epochs[0], epochs[1]);
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t docs = 10'000'000;
  std::vector<std::string> datasets;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--docs") == 0 && i + 1 < argc) {
      docs = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--dataset") == 0 && i + 1 < argc) {
      datasets.push_back(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--docs N] [--dataset PATH]...\n", argv[0]);
      return 2;
    }
  }
  auto start = std::chrono::steady_clock::now();
  auto lengths = LogNormalLengths(docs);
  std::printf("generated %llu log-normal lengths in %.2fs\n", static_cast<unsigned long long>(docs),
              Seconds(start));
  MeasureAll(lengths);
  for (PackMode pack : {PackMode::kConcat, PackMode::kBestFit, PackMode::kPad}) {
    MeasureMixture(lengths, pack);
  }
  if (datasets.empty()) {
    std::printf(
        "no --dataset given: the bundled corpus was not measured "
        "(pack it with `stoker pack data/sample/corpus.jsonl -o DIR --tokenizer "
        "data/sample/sample.model`, then pass --dataset DIR)\n");
  }
  for (const std::string& path : datasets) {
    auto source = stoker::OpenTokenSource(path);
    if (!source.ok()) {
      std::printf("%s: %s\n", path.c_str(), source.status().ToString().c_str());
      continue;
    }
    auto l = (*source)->Lengths();
    auto shared = std::make_shared<DatasetLengths>(std::move(*l));
    MeasureAll(shared);
  }
  return 0;
}
