// Loads a token dataset with the stoker loader and prints the first few batches.
//
//   example_load_batches DATASET [SEQ_LEN] [BATCH_SIZE] [NUM_BATCHES]
//
// DATASET is anything OpenTokenSource accepts: a stoker dataset directory, a Megatron prefix,
// a .npy or a nanoGPT/llm.c .bin file.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "stoker/loader.h"

namespace {

int64_t At(const stoker::TensorView& v, int64_t i) {
  return v.dtype == stoker::TokenDType::kInt32 ? static_cast<const int32_t*>(v.data)[i]
                                               : static_cast<const int64_t*>(v.data)[i];
}

void PrintRow(const char* name, const stoker::TensorView& v, int64_t row, int64_t S) {
  std::printf("    %s", name);
  for (int64_t i = 0; i < S; ++i) std::printf(" %lld", static_cast<long long>(At(v, row * S + i)));
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DATASET [SEQ_LEN] [BATCH_SIZE] [NUM_BATCHES]\n", argv[0]);
    return 2;
  }
  stoker::LoaderOptions options;
  options.seq_len = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 16;
  options.batch_size = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 2;
  const int num_batches = argc > 4 ? std::atoi(argv[4]) : 3;
  options.pack = stoker::PackMode::kBestFit;

  auto loader = stoker::Loader::Open({{argv[1], nullptr}}, options);
  if (!loader.ok()) {
    std::fprintf(stderr, "error: %s\n", loader.status().ToString().c_str());
    return 1;
  }
  for (int n = 0; n < num_batches; ++n) {
    auto next = (*loader)->Next();
    if (!next.ok()) {
      std::fprintf(stderr, "error: %s\n", next.status().ToString().c_str());
      return 1;
    }
    if (!next->has_value()) break;  // end of the epoch
    const stoker::LoaderBatch& batch = **next;
    std::printf("epoch %llu step %llu  (%llu real tokens, max_seqlen %d)\n",
                static_cast<unsigned long long>(batch.epoch()),
                static_cast<unsigned long long>(batch.step()),
                static_cast<unsigned long long>(batch.real_tokens()), batch.max_seqlen());
    const int64_t S = static_cast<int64_t>(batch.seq_len());
    for (int64_t row = 0; row < static_cast<int64_t>(batch.batch_size()); ++row) {
      std::printf("  row %lld\n", static_cast<long long>(row));
      PrintRow("input_ids   ", batch.input_ids(), row, S);
      PrintRow("labels      ", batch.labels(), row, S);
      PrintRow("position_ids", batch.position_ids(), row, S);
      PrintRow("segment_ids ", batch.segment_ids(), row, S);
    }
    stoker::TensorView cu = batch.cu_seqlens();
    std::printf("  cu_seqlens ");
    for (int64_t i = 0; i < cu.shape[0]; ++i) {
      std::printf(" %d", static_cast<const int32_t*>(cu.data)[i]);
    }
    std::printf("\n  resume with: %s\n", batch.state_after().ToJson().c_str());
  }
  stoker::LoaderStats s = (*loader)->Stats();
  std::printf("%llu batches, %.0f tokens/s, consumer waited %.3f ms in total, %d workers\n",
              static_cast<unsigned long long>(s.batches), s.tokens_per_s, s.wait_total_ms,
              s.num_workers);
  return 0;
}
