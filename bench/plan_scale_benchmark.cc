// The plan at scale (docs/plan.md, "Scale"): lengths-only datasets of many documents, planned as
// one rank of a large job would. Prints figures; asserts nothing. bench/plan_scale.sh drives it.
//
//   plan_scale_benchmark make DIR DOCS [--megatron]
//       writes DIR/lengths-DOCS.stkidx (a length index; log-normal lengths, mean ~820 tokens) and,
//       with --megatron, DIR/megatron-DOCS.idx plus a sparse .bin of the right size.
//   plan_scale_benchmark run [--pack concat|bestfit|pad] [--seq N] [--batch N] [--world N]
//       [--rank N] [--count] FILE...
//       [--repeat N] [--phases N] [--total-tokens T] [--at SHARE] [--tokens-per-step N]
//       plans FILE (several: a mixture, weights 3:2:1:...; --repeat N plans the files N times over,
//       as N times as many datasets) and prints one JSON line: seconds to open, to the first batch
//       (from the start, or at SHARE of the run: a resume far into it), then to the fingerprint
//       (the first checkpoint), to count an epoch cold and from the cache, and the private
//       (RssAnon) and shared (RssFile) resident memory after each. --phases N adds a mixture
//       schedule of N phases of equal length over --total-tokens (default 2e12), every other one
//       ramped (docs/plan.md, "Schedules"); the line then also has the checkpoint's size and the
//       time to make it. --tokens-per-step N plans the first file as steps counted in tokens
//       (microbatches of --seq tokens, --batch of them at least, balance=attention) and prints
//       the time to its first step and the memory after it.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "format/index_lengths.h"
#include "format/length_index.h"
#include "format/megatron_index.h"
#include "plan/token_step_planner.h"
#include "stoker/plan.h"
#include "stoker/token_source.h"

namespace {

using Clock = std::chrono::steady_clock;
using stoker::DatasetLengths;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

uint64_t StatusKb(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string key;
  uint64_t kb = 0;
  while (f >> key) {
    if (key == field) {
      f >> kb;
      return kb;
    }
    f.ignore(1 << 20, '\n');
  }
  return 0;
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "plan_scale_benchmark: %s\n", what.c_str());
  std::exit(2);
}

// Log-normal lengths (median 400, sigma 1.2: mean ~820 tokens), a few empty.
class LengthGen {
 public:
  uint64_t Next() {
    uint64_t l = static_cast<uint64_t>(dist_(rng_));
    return (rng_() & 1023) == 0 ? 0 : std::min<uint64_t>(l + 1, 1u << 20);
  }

 private:
  std::mt19937_64 rng_{20260101};
  std::lognormal_distribution<double> dist_{std::log(400.0), 1.2};
};

void Make(const std::string& dir, uint64_t docs, bool megatron) {
  const std::string path = dir + "/lengths-" + std::to_string(docs) + ".stkidx";
  constexpr uint64_t kShardDocs = 1 << 20;  // ~1 GB shards
  std::vector<uint64_t> shards{0};
  while (shards.back() < docs) shards.push_back(std::min(docs, shards.back() + kShardDocs));
  auto writer = stoker::LengthIndexWriter::Create(path, shards);
  if (!writer.ok()) Die(writer.status().ToString());
  FILE* idx = nullptr;
  const std::string prefix = dir + "/megatron-" + std::to_string(docs);
  if (megatron) {
    idx = std::fopen((prefix + ".idx").c_str(), "wb");
    if (idx == nullptr) Die("cannot write " + prefix + ".idx");
    std::fwrite(stoker::kMegatronMagic, 1, 9, idx);
    const uint64_t version = 1, n = docs, d1 = docs + 1;
    const uint8_t dtype = 8;  // uint16
    std::fwrite(&version, 8, 1, idx);
    std::fwrite(&dtype, 1, 1, idx);
    std::fwrite(&n, 8, 1, idx);
    std::fwrite(&d1, 8, 1, idx);
  }
  LengthGen gen;
  std::vector<uint64_t> chunk(1 << 16);
  std::vector<int32_t> sizes(chunk.size());
  uint64_t tokens = 0;
  for (uint64_t d = 0; d < docs; d += chunk.size()) {
    const uint64_t n = std::min<uint64_t>(chunk.size(), docs - d);
    for (uint64_t i = 0; i < n; ++i) {
      chunk[i] = gen.Next();
      sizes[i] = static_cast<int32_t>(chunk[i]);
      tokens += chunk[i];
    }
    if (!(*writer)->Add(chunk.data(), n).ok()) Die("write " + path);
    if (idx != nullptr) std::fwrite(sizes.data(), 4, n, idx);
  }
  if (!(*writer)->Finish().ok()) Die("finish " + path);
  if (idx != nullptr) {
    // Pointers are the prefix sums of the lengths (replayed from the same generator).
    LengthGen again;
    int64_t ptr = 0;
    std::vector<int64_t> buf(chunk.size());
    for (uint64_t d = 0; d < docs; d += buf.size()) {
      const uint64_t n = std::min<uint64_t>(buf.size(), docs - d);
      for (uint64_t i = 0; i < n; ++i) {
        buf[i] = ptr;
        ptr += 2 * static_cast<int64_t>(again.Next());
      }
      std::fwrite(buf.data(), 8, n, idx);
    }
    for (uint64_t d = 0; d <= docs; d += buf.size()) {
      const uint64_t n = std::min<uint64_t>(buf.size(), docs + 1 - d);
      for (uint64_t i = 0; i < n; ++i) buf[i] = static_cast<int64_t>(d + i);
      std::fwrite(buf.data(), 8, n, idx);
    }
    std::fclose(idx);
    const int fd = ::open((prefix + ".bin").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(2 * tokens)) != 0) Die("sparse .bin");
    ::close(fd);
  }
  std::printf("{\"docs\": %llu, \"tokens\": %llu, \"index\": \"%s\"}\n",
              static_cast<unsigned long long>(docs), static_cast<unsigned long long>(tokens),
              path.c_str());
}

// A length index read in place, as StokerDataset gives it (chunks verified as they are read).
std::shared_ptr<const DatasetLengths> OpenIndex(const std::string& path) {
  auto index = stoker::LengthIndex::Open(path);
  if (!index.ok()) Die(index.status().ToString());
  return std::make_shared<const DatasetLengths>(stoker::LengthsFromIndex(*index, path));
}

std::shared_ptr<const DatasetLengths> OpenAny(const std::string& path) {
  if (path.size() > 7 && path.compare(path.size() - 7, 7, ".stkidx") == 0) return OpenIndex(path);
  auto source = stoker::OpenTokenSource(path);
  if (!source.ok()) Die(source.status().ToString());
  auto lengths = (*source)->Lengths();
  if (!lengths.ok()) Die(lengths.status().ToString());
  return std::make_shared<const DatasetLengths>(std::move(*lengths));
}

// Steps counted in tokens (--tokens-per-step, one dataset, balance=attention with Llama-3.1-8B's
// a and b): the time to the first step (one window read and balanced) and the memory after it.
int RunTokenSteps(std::shared_ptr<const DatasetLengths> lengths, stoker::PlanOptions o,
                  Clock::time_point start, double open_s) {
  o.microbatches = o.batch_size;
  o.max_tokens_per_microbatch = o.seq_len;
  o.balance = stoker::BalanceMode::kAttention;
  o.step_cost = {45028737024.0, 786432.0, 0.0};
  auto planner = stoker::TokenStepPlanner::Create(lengths, o);
  if (!planner.ok()) Die(planner.status().ToString());
  stoker::Batch batch;
  const stoker::Status st = (*planner)->BatchAt({0, 0}, &batch);
  if (!st.ok()) Die(st.ToString());
  const double first_s = Since(start);
  std::printf(
      "{\"tokens_per_step\": %llu, \"docs\": %llu, \"world\": %u, \"rank\": %u, "
      "\"microbatch_tokens\": %llu, \"open_s\": %.3f, \"first_step_s\": %.3f, "
      "\"microbatches\": %u, \"step_imbalance\": %.4f, \"rss_anon_mb\": %.1f, "
      "\"rss_file_mb\": %.1f}\n",
      static_cast<unsigned long long>(o.tokens_per_step),
      static_cast<unsigned long long>(lengths->num_documents()), o.world_size, o.rank,
      static_cast<unsigned long long>(o.seq_len), open_s, first_s, batch.figures->microbatches,
      batch.figures->step_imbalance, StatusKb("RssAnon:") / 1024.0, StatusKb("RssFile:") / 1024.0);
  return 0;
}

int Run(int argc, char** argv) {
  stoker::PlanOptions o;
  o.seq_len = 4096;
  o.batch_size = 8;
  o.world_size = 1024;
  o.rank = 517;
  bool count = false;
  std::vector<std::string> files;
  uint64_t repeat = 1, phases = 0;
  double total_tokens = 2e12, at = 0;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::strtoull(argv[++i], nullptr, 10) : 0; };
    if (a == "--pack") {
      auto p = stoker::ParsePackMode(i + 1 < argc ? argv[++i] : "");
      if (!p.ok()) Die(p.status().ToString());
      o.pack = *p;
    } else if (a == "--seq") {
      o.seq_len = next();
    } else if (a == "--batch") {
      o.batch_size = next();
    } else if (a == "--world") {
      o.world_size = static_cast<uint32_t>(next());
    } else if (a == "--rank") {
      o.rank = static_cast<uint32_t>(next());
    } else if (a == "--count") {
      count = true;
    } else if (a == "--repeat") {
      repeat = next();
    } else if (a == "--phases") {
      phases = next();
    } else if (a == "--total-tokens") {
      total_tokens = i + 1 < argc ? std::strtod(argv[++i], nullptr) : 0;
    } else if (a == "--tokens-per-step") {
      o.tokens_per_step = next();
    } else if (a == "--at") {
      at = i + 1 < argc ? std::strtod(argv[++i], nullptr) : 0;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) Die("run: no file");
  const auto start = Clock::now();
  std::vector<stoker::PlanDataset> datasets;
  for (size_t k = 0; k < files.size(); ++k) {
    auto lengths = OpenAny(files[k]);
    for (uint64_t r = 0; r < repeat; ++r) {
      datasets.push_back({lengths, static_cast<double>(files.size() - k) + 0.1 * r});
    }
  }
  const uint64_t run_rows = static_cast<uint64_t>(total_tokens / static_cast<double>(o.seq_len));
  for (uint64_t p = 0; p < phases; ++p) {
    stoker::MixturePhase phase;
    phase.end_row = p + 1 == phases ? UINT64_MAX : run_rows / phases * (p + 1);
    for (size_t k = 0; k < datasets.size(); ++k) {
      phase.weights.push_back(1.0 + static_cast<double>((k * 7 + p * 3) % 10));
    }
    if (p % 2 == 1 && p + 1 < phases) {
      for (size_t k = 0; k < datasets.size(); ++k) {
        phase.end_weights.push_back(1.0 + static_cast<double>((k * 3 + p) % 10));
      }
    }
    o.phases.push_back(std::move(phase));
  }
  const double open_s = Since(start);
  if (o.tokens_per_step > 0) return RunTokenSteps(datasets[0].lengths, o, start, open_s);
  auto plan = stoker::Plan::Create(datasets, o, stoker::SharedWindowCounter());
  if (!plan.ok()) Die(plan.status().ToString());
  const uint64_t at_row = static_cast<uint64_t>(at * static_cast<double>(run_rows));
  const uint64_t epoch_rows = (*plan)->rows_in_epoch(0);
  const stoker::PlanPosition pos{at_row / epoch_rows, at_row % epoch_rows};
  auto batch = (*plan)->GetBatchAt(pos, o.rank);
  if (!batch.ok()) Die(batch.status().ToString());
  const double first_s = Since(start);
  double state_s = 0;
  size_t state_bytes = 0;
  if (datasets.size() > 1) {
    auto t = Clock::now();
    state_bytes = (*plan)->MakeState(pos).ToJson().size();
    state_s = Since(t);
  }
  const uint64_t anon_first = StatusKb("RssAnon:"), file_first = StatusKb("RssFile:");
  // The first checkpoint's cost: for a Megatron input never seen, the one pass of the length hash.
  auto fp_start = Clock::now();
  const std::string fingerprint = (*plan)->fingerprint();
  const double fingerprint_s = Since(fp_start);
  double cold_s = 0, cached_s = 0;
  uint64_t steps = 0, anon_count = anon_first, file_count = file_first;
  if (count) {
    auto t = Clock::now();
    steps = (*plan)->steps_per_epoch(0);
    cold_s = Since(t);
    anon_count = StatusKb("RssAnon:");
    file_count = StatusKb("RssFile:");
    // Another process's view: a new plan over the same files counts from the cache.
    auto again = stoker::Plan::Create(datasets, o, stoker::SharedWindowCounter());
    t = Clock::now();
    if ((*again)->steps_per_epoch(0) != steps) Die("cached count differs");
    cached_s = Since(t);
  }
  uint64_t docs = 0;
  for (const auto& d : datasets) docs += d.lengths->num_documents();
  std::printf(
      "{\"pack\": \"%s\", \"datasets\": %zu, \"docs\": %llu, \"rank\": %u, \"open_s\": %.3f, "
      "\"first_batch_s\": %.3f, \"fingerprint_s\": %.3f, \"rss_anon_mb\": %.1f, \"rss_file_mb\": "
      "%.1f, \"steps\": %llu, "
      "\"count_cold_s\": %.3f, \"count_cached_s\": %.4f, \"rss_anon_after_count_mb\": %.1f, "
      "\"rss_file_after_count_mb\": %.1f, \"phases\": %llu, \"at_row\": %llu, "
      "\"checkpoint_bytes\": %zu, \"checkpoint_s\": %.3f, \"fingerprint\": \"%s\"}\n",
      std::string(stoker::PackModeName(o.pack)).c_str(), datasets.size(),
      static_cast<unsigned long long>(docs), o.rank, open_s, first_s, fingerprint_s,
      anon_first / 1024.0, file_first / 1024.0, static_cast<unsigned long long>(steps), cold_s,
      cached_s, anon_count / 1024.0, file_count / 1024.0, static_cast<unsigned long long>(phases),
      static_cast<unsigned long long>(at_row), state_bytes, state_s, fingerprint.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && std::string(argv[1]) == "make") {
    Make(argv[2], std::strtoull(argv[3], nullptr, 10),
         argc >= 5 && std::string(argv[4]) == "--megatron");
    return 0;
  }
  if (argc >= 3 && std::string(argv[1]) == "run") return Run(argc, argv);
  std::fprintf(stderr,
               "usage: plan_scale_benchmark make DIR DOCS [--megatron]\n"
               "       plan_scale_benchmark run [--pack P] [--seq N] [--batch N] [--world N] "
               "[--rank N] [--count] [--repeat N] [--phases N] [--total-tokens T] [--at SHARE] "
               "FILE...\n");
  return 2;
}
