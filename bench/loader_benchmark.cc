// Loader-only benchmark: tokens/s, time to first batch, consumer stall and RSS of the C++ loader
// for num_workers 1, 2, 4, 8, 16 (each in a fresh child process, so RSS is its own).
//
//   loader_benchmark [--data PREFIX] [--tokens N] [--seconds S] [--workers 1,2,4,8,16]
//                    [--seq-len 2048] [--batch 32] [--ring-batches N] [--int32]
//                    [--ids-labels-only] [--json]
//
// The ring holds prefetch_factor (4) x num_workers + 1 batches, as torch's prefetch_factor means;
// --ring-batches N instead keeps about N batches in flight whatever the worker count, which shows
// the RSS that does not come from the ring. --ids-labels-only turns position_ids and segment_ids
// off: the same two [B, S] tensors as the torch recipe in bench/loader_vs_torch.py.
//
// Without --data it writes a Megatron dataset of N tokens (default 100 M, uint16, documents of
// log-normal length) under /tmp/stoker-loader-bench and reads it page-cached. Global shuffle,
// concat packing. Prints one line per worker count (JSON lines with --json).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "stoker/loader.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  std::string data;
  uint64_t tokens = 100'000'000;
  double seconds = 5;
  std::vector<int> workers = {1, 2, 4, 8, 16};
  uint64_t seq_len = 2048, batch = 32;
  bool json = false;
  bool int32 = false;            // int32 tokens (default int64, like the torch recipe)
  bool ids_labels_only = false;  // no position_ids / segment_ids
  int ring_batches = 0;  // > 0: batches in flight fixed (prefetch_factor = ceil(this / workers))
};

// Writes PREFIX.bin/.idx (Megatron layout, uint16) unless they already hold `tokens` tokens.
std::string MakeDataset(uint64_t tokens) {
  const std::string dir = "/tmp/stoker-loader-bench";
  const std::string prefix = dir + "/tokens_" + std::to_string(tokens);
  std::error_code ec;
  if (std::filesystem::file_size(prefix + ".bin", ec) == tokens * 2 && !ec &&
      std::filesystem::exists(prefix + ".idx")) {
    return prefix;
  }
  std::filesystem::create_directories(dir);
  std::mt19937_64 rng(1234);
  std::lognormal_distribution<double> len_dist(std::log(800.0), 1.0);
  std::vector<int32_t> lengths;
  for (uint64_t left = tokens; left > 0;) {
    uint64_t len = std::min<uint64_t>(left, 1 + static_cast<uint64_t>(len_dist(rng)));
    lengths.push_back(static_cast<int32_t>(len));
    left -= len;
  }
  {
    std::ofstream bin(prefix + ".bin", std::ios::binary);
    std::vector<uint16_t> chunk(1 << 20);
    for (uint64_t done = 0; done < tokens; done += chunk.size()) {
      size_t n = std::min<uint64_t>(chunk.size(), tokens - done);
      for (size_t i = 0; i < n; ++i) chunk[i] = static_cast<uint16_t>(rng() % 50000);
      bin.write(reinterpret_cast<const char*>(chunk.data()), n * 2);
    }
  }
  std::ofstream idx(prefix + ".idx", std::ios::binary);
  auto put = [&](const void* p, size_t n) { idx.write(static_cast<const char*>(p), n); };
  const char magic[9] = {'M', 'M', 'I', 'D', 'I', 'D', 'X', 0, 0};
  put(magic, 9);
  uint64_t version = 1, n = lengths.size(), docs = n + 1;
  uint8_t dtype = 8;  // uint16
  put(&version, 8);
  put(&dtype, 1);
  put(&n, 8);
  put(&docs, 8);
  put(lengths.data(), 4 * n);
  int64_t pointer = 0;
  for (int32_t len : lengths) {
    put(&pointer, 8);
    pointer += 2 * int64_t{len};
  }
  for (int64_t d = 0; d <= static_cast<int64_t>(n); ++d) put(&d, 8);
  return prefix;
}

// A field of /proc/self/status in kB: "RssAnon" is the process's own memory (ring, threads, plan),
// "RssFile" the page-cached dataset pages it has mapped (grows with the data read, not workers).
long StatusKb(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(status, line)) {
    if (line.compare(0, n, field) == 0 && line.size() > n && line[n] == ':') {
      return std::atol(line.c_str() + n + 1);
    }
  }
  return -1;
}

// User + system CPU time of this process (all its threads).
double CpuSeconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

// One configuration, in this process: prints its result line.
int RunOne(const Args& a, int workers) {
  stoker::LoaderOptions o;
  o.seq_len = a.seq_len;
  o.batch_size = a.batch;
  o.num_workers = workers;
  o.prefetch_factor = a.ring_batches > 0 ? (a.ring_batches + workers - 1) / workers : 4;
  o.shuffle = stoker::ShuffleMode::kGlobal;
  o.token_dtype = a.int32 ? stoker::TokenDType::kInt32 : stoker::TokenDType::kInt64;
  o.pack = stoker::PackMode::kConcat;
  o.monitor_warnings = false;  // nothing consumes here: the stall warning would only be noise
  o.position_ids = o.segment_ids = !a.ids_labels_only;
  auto t0 = Clock::now();
  auto loader = stoker::Loader::Open({{a.data, nullptr}}, o);
  if (!loader.ok()) {
    std::fprintf(stderr, "loader_benchmark: %s\n", loader.status().ToString().c_str());
    return 1;
  }
  double first_batch_s = -1;
  double cpu_at_start_s = 0;
  uint64_t batches = 0;
  uint64_t checksum = 0;
  Clock::time_point measure_start;
  const auto deadline = t0 + std::chrono::duration<double>(a.seconds + 0.5);
  while (Clock::now() < deadline) {
    auto next = (*loader)->Next();
    if (!next.ok()) {
      std::fprintf(stderr, "loader_benchmark: %s\n", next.status().ToString().c_str());
      return 1;
    }
    if (!next->has_value()) continue;
    // Touch one value per row, as a consumer handing the batch on would.
    checksum += *static_cast<const uint8_t*>((**next).input_ids().data);
    if (first_batch_s < 0) {
      first_batch_s = std::chrono::duration<double>(Clock::now() - t0).count();
      measure_start = Clock::now();  // throughput is measured after the first batch
      cpu_at_start_s = CpuSeconds();
      continue;
    }
    ++batches;
  }
  const double secs = std::chrono::duration<double>(Clock::now() - measure_start).count();
  const double cpu_s = CpuSeconds() - cpu_at_start_s;
  stoker::LoaderStats s = (*loader)->Stats();
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  const double tokens_per_s = batches * a.batch * a.seq_len / secs;
  // Tokens per CPU-second: what the loader costs, independent of what else the machine runs.
  const double tokens_per_cpu_s = batches * a.batch * a.seq_len / cpu_s;
  const long anon_kb = StatusKb("RssAnon"), file_kb = StatusKb("RssFile");
  if (a.json) {
    std::printf(
        "{\"workers\": %d, \"tokens_per_s\": %.0f, \"tokens_per_cpu_s\": %.0f, "
        "\"first_batch_s\": %.4f, "
        "\"rss_anon_mb\": %.1f, \"rss_file_mb\": %.1f, \"max_rss_mb\": %.1f, "
        "\"stall_ms\": %.1f, \"batches\": %llu, \"read_s\": %.3f, \"assemble_s\": %.3f, "
        "\"checksum\": %llu}\n",
        workers, tokens_per_s, tokens_per_cpu_s, first_batch_s, anon_kb / 1024.0, file_kb / 1024.0,
        ru.ru_maxrss / 1024.0, s.wait_total_ms, static_cast<unsigned long long>(batches), s.read_s,
        s.assemble_s, static_cast<unsigned long long>(checksum));
  } else {
    std::printf(
        "workers %2d  %7.1f M tokens/s  %7.1f M tokens/CPU-s  first batch %6.1f ms  "
        "RSS anon %6.1f MB (ring %2d slots)  file %6.1f MB  read %.2f s  assemble %.2f s\n",
        workers, tokens_per_s / 1e6, tokens_per_cpu_s / 1e6, first_batch_s * 1e3, anon_kb / 1024.0,
        s.ring_slots, file_kb / 1024.0, s.read_s, s.assemble_s);
  }
  std::fflush(stdout);
  return 0;
}

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "loader_benchmark: %s needs a value\n", k.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (k == "--data")
      a.data = val();
    else if (k == "--tokens")
      a.tokens = std::stoull(val());
    else if (k == "--seconds")
      a.seconds = std::stod(val());
    else if (k == "--seq-len")
      a.seq_len = std::stoull(val());
    else if (k == "--batch")
      a.batch = std::stoull(val());
    else if (k == "--json")
      a.json = true;
    else if (k == "--ring-batches")
      a.ring_batches = std::stoi(val());
    else if (k == "--ids-labels-only")
      a.ids_labels_only = true;
    else if (k == "--int32")
      a.int32 = true;
    else if (k == "--workers") {
      a.workers.clear();
      std::stringstream ss(val());
      for (std::string w; std::getline(ss, w, ',');) a.workers.push_back(std::stoi(w));
    } else {
      std::fprintf(stderr, "loader_benchmark: unknown argument %s\n", k.c_str());
      std::exit(2);
    }
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = Parse(argc, argv);
  if (a.data.empty()) a.data = MakeDataset(a.tokens);
  if (!a.json) {
    std::printf(
        "loader_benchmark: %s, seq_len %llu, batch %llu, global shuffle, concat, "
        "%.1f s per run, %ld cores\n",
        a.data.c_str(), static_cast<unsigned long long>(a.seq_len),
        static_cast<unsigned long long>(a.batch), a.seconds, sysconf(_SC_NPROCESSORS_ONLN));
  }
  std::fflush(stdout);
  int rc = 0;
  for (int w : a.workers) {
    // A fresh process per worker count, so each RSS figure is that configuration's alone.
    pid_t pid = fork();
    if (pid == 0) std::_Exit(RunOne(a, w));
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) rc = 1;
  }
  return rc;
}
