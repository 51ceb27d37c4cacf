// The "remove the data pipeline" experiment: time a training step fed by the synthetic source
// (one fixed batch, no loading at all) and, if a dataset is given, by the real loader. If the two
// step times match, data loading is not what limits training.
//
//   example_synthetic_step [DATASET] [STEP_MS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "stoker/loader.h"

namespace {

using Clock = std::chrono::steady_clock;

// Stands in for train_step: touches the batch, then computes for `step_ms`.
int64_t FakeTrainStep(const stoker::LoaderBatch& batch, double step_ms) {
  const auto* ids = static_cast<const int64_t*>(batch.input_ids().data);
  int64_t sum = 0;
  for (uint64_t i = 0; i < batch.batch_size() * batch.seq_len(); ++i) sum += ids[i];
  const auto end = Clock::now() + std::chrono::duration<double, std::milli>(step_ms);
  while (Clock::now() < end) {
  }
  return sum;
}

double MeanStepMs(stoker::Loader& loader, int steps, double step_ms) {
  int64_t sink = 0;
  auto t0 = Clock::now();
  int done = 0;
  while (done < steps) {
    auto next = loader.Next();
    if (!next.ok()) {
      std::fprintf(stderr, "error: %s\n", next.status().ToString().c_str());
      std::exit(1);
    }
    if (!next->has_value()) continue;  // epoch boundary
    sink += FakeTrainStep(**next, step_ms);
    ++done;
  }
  if (sink == 42) std::printf(" ");
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / steps;
}

}  // namespace

int main(int argc, char** argv) {
  const double step_ms = argc > 2 ? std::atof(argv[2]) : 5.0;
  constexpr int kSteps = 100;
  stoker::LoaderOptions options;
  options.seq_len = 2048;
  options.batch_size = 8;
  auto synthetic = stoker::Loader::OpenSynthetic(options);
  if (!synthetic.ok()) {
    std::fprintf(stderr, "error: %s\n", synthetic.status().ToString().c_str());
    return 1;
  }
  std::printf("synthetic batch: %.3f ms per step (compute %.1f ms)\n",
              MeanStepMs(**synthetic, kSteps, step_ms), step_ms);
  if (argc > 1) {
    auto real = stoker::Loader::Open({{argv[1], nullptr}}, options);
    if (!real.ok()) {
      std::fprintf(stderr, "error: %s\n", real.status().ToString().c_str());
      return 1;
    }
    const double real_ms = MeanStepMs(**real, kSteps, step_ms);
    std::printf("real loader:     %.3f ms per step; data stall %.3f ms in total\n", real_ms,
                (*real)->Stats().wait_total_ms);
  }
  return 0;
}
