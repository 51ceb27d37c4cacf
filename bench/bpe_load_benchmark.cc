// How long opening a tokenizer takes (the serial first step of `stoker pack` and of
// stoker.Tokenizer): wall and CPU milliseconds of OpenTokenizer plus a first Encode, best of
// REPEAT (the first open of a process is shown apart: it also fills process-wide tables), with
// LOAD_THREADS building the tables (TokenizerOptions::load_threads, 0 = all cores; CPU is the
// calling thread's). Asserts nothing.
//   build/bench/bpe_load_benchmark TOKENIZER [PATTERN] [REPEAT] [LOAD_THREADS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "text/tokenizer.h"

namespace {

double ThreadCpu() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s TOKENIZER [PATTERN] [REPEAT] [LOAD_THREADS]\n", argv[0]);
    return 2;
  }
  stoker::TokenizerOptions options;
  if (argc > 2) options.pattern = argv[2];
  int repeat = argc > 3 ? std::atoi(argv[3]) : 5;
  options.load_threads = argc > 4 ? std::atoi(argv[4]) : 1;
  double best_wall = 1e30, best_cpu = 1e30, first_cpu = 0;
  for (int r = 0; r < repeat; ++r) {
    double c0 = ThreadCpu();
    auto t0 = std::chrono::steady_clock::now();
    auto opened = stoker::OpenTokenizer(argv[1], options);
    if (!opened.ok()) {
      std::fprintf(stderr, "%s\n", opened.status().ToString().c_str());
      return 2;
    }
    std::vector<int32_t> ids;
    if (!(*opened)->Encode("Hello, world! Grüße, 世界 123", &ids).ok()) return 1;
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double cpu = ThreadCpu() - c0;
    if (r == 0) first_cpu = cpu;
    best_wall = std::min(best_wall, wall);
    best_cpu = std::min(best_cpu, cpu);
  }
  std::printf(
      "open %s on %d load thread(s): first %.1f ms CPU; best of %d: %.1f ms wall, %.1f ms CPU\n",
      argv[1], options.load_threads, first_cpu * 1e3, repeat, best_wall * 1e3, best_cpu * 1e3);
  return 0;
}
