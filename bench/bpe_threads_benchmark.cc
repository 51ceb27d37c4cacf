// BPE encode scaling over threads, in C++ (no Python, no pack I/O): documents of a JSONL file
// ("text" field) encoded on 1, 2, ... threads that take documents in turn from a shared counter.
// Prints, per thread count, wall MB/s and the CPU seconds the workers used (their sum and the
// slowest), so a busy machine shows up as wall time without CPU time. Asserts nothing.
//   build/bpe_threads_benchmark TOKENIZER PATTERN CORPUS.jsonl [REPEAT] [THREADS...]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "text/tokenizer.h"

namespace {

double ThreadCpu() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double LoadAverage() {
  double load = -1;
  std::ifstream("/proc/loadavg") >> load;
  return load;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s TOKENIZER PATTERN CORPUS.jsonl [REPEAT] [THREADS...]\n",
                 argv[0]);
    return 2;
  }
  stoker::TokenizerOptions options;
  options.pattern = argv[2];
  auto opened = stoker::OpenTokenizer(argv[1], options);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s\n", opened.status().ToString().c_str());
    return 2;
  }
  const stoker::Tokenizer& tok = **opened;
  std::vector<std::string> docs;
  size_t bytes = 0;
  std::ifstream in(argv[3]);
  for (std::string line; std::getline(in, line);) {
    docs.push_back(nlohmann::json::parse(line).at("text").get<std::string>());
    bytes += docs.back().size();
  }
  int repeat = argc > 4 ? std::atoi(argv[4]) : 3;
  std::vector<int> counts;
  for (int i = 5; i < argc; ++i) counts.push_back(std::atoi(argv[i]));
  if (counts.empty()) counts = {1, 2};
  std::printf("%zu documents, %.2f MB; load average %.1f\n", docs.size(), bytes / 1e6,
              LoadAverage());
  std::printf(
      "| threads | wall MB/s | worker CPU s (sum) | slowest worker CPU s | MB/s per CPU s |\n");
  std::printf("|---:|---:|---:|---:|---:|\n");
  for (int n : counts) {
    double best_wall = 1e30, cpu_sum = 0, cpu_max = 0;
    for (int r = 0; r < repeat; ++r) {
      std::atomic<size_t> next{0};
      std::vector<double> cpu(static_cast<size_t>(n));
      auto work = [&](int k) {
        double c0 = ThreadCpu();
        std::vector<int32_t> ids;
        for (size_t i; (i = next.fetch_add(1)) < docs.size();) {
          ids.clear();
          if (!tok.Encode(docs[i], &ids).ok()) std::abort();
        }
        cpu[static_cast<size_t>(k)] = ThreadCpu() - c0;
      };
      auto t0 = std::chrono::steady_clock::now();
      std::vector<std::thread> threads;
      for (int k = 0; k < n; ++k) threads.emplace_back(work, k);
      for (auto& t : threads) t.join();
      double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (wall < best_wall) {
        best_wall = wall;
        cpu_sum = 0;
        for (double c : cpu) cpu_sum += c;
        cpu_max = *std::max_element(cpu.begin(), cpu.end());
      }
    }
    std::printf("| %d | %.1f | %.3f | %.3f | %.1f |\n", n, bytes / 1e6 / best_wall, cpu_sum,
                cpu_max, bytes / 1e6 / cpu_sum);
  }
  std::printf("load average at the end %.1f\n", LoadAverage());
  return 0;
}
