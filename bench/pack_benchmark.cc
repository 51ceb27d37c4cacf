// Pack throughput: MB/s of input (and per thread) for the bytes and SentencePiece tokenizers on a
// JSONL corpus made by repeating data/sample/corpus.jsonl to ~16 MB, and files/s for a directory of
// small files. Prints figures; asserts nothing. Run: build/pack_benchmark
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "common/temp_dir.h"
#include "ingest/pack.h"
#include "text/tokenizer.h"

namespace stoker {
namespace {

// The repository root from this file's path (CMake compiles it by absolute path), unless
// STOKER_SOURCE_DIR says otherwise.
std::string SampleDir() {
  const char* env = std::getenv("STOKER_SOURCE_DIR");
  std::filesystem::path root = env ? std::filesystem::path(env)
                                   : std::filesystem::path(__FILE__).parent_path().parent_path();
  return (root / "data" / "sample").string();
}
const std::string kSampleDir = SampleDir();

struct Fixture {
  std::unique_ptr<TempDir> dir;
  std::string corpus;     // ~16 MB JSONL
  std::string small_dir;  // 20,000 files of ~2 KB
  uint64_t corpus_bytes = 0;
  uint64_t small_bytes = 0;

  static Fixture& Get() {
    static Fixture f = Make();
    return f;
  }

  static Fixture Make() {
    Fixture f;
    f.dir = std::move(*TempDir::Create("stoker-pack-bench-"));
    std::ifstream in(kSampleDir + "/corpus.jsonl", std::ios::binary);
    std::string sample((std::istreambuf_iterator<char>(in)), {});
    f.corpus = f.dir->Join("corpus.jsonl");
    std::ofstream out(f.corpus, std::ios::binary);
    while (f.corpus_bytes < (16u << 20)) {
      out << sample;
      f.corpus_bytes += sample.size();
    }
    f.small_dir = f.dir->Join("small");
    for (int d = 0; d < 20; ++d) {
      std::string sub = f.small_dir + "/" + std::to_string(d);
      std::filesystem::create_directories(sub);
      for (int i = 0; i < 1000; ++i) {
        std::string text = sample.substr((d * 1000 + i) * 211 % (sample.size() - 4096), 2048);
        std::ofstream(sub + "/" + std::to_string(i) + ".txt", std::ios::binary) << text;
        f.small_bytes += text.size();
      }
    }
    return f;
  }
};

void RunPack(benchmark::State& state, const std::string& tokenizer_spec, const std::string& input,
             uint64_t input_bytes) {
  Fixture& f = Fixture::Get();
  auto tokenizer = OpenTokenizer(tokenizer_spec);
  if (!tokenizer.ok()) {
    state.SkipWithError(tokenizer.status().ToString().c_str());
    return;
  }
  const int threads = static_cast<int>(state.range(0));
  PackOptions o;
  o.inputs = {input};
  o.output_dir = f.dir->Join("out");
  o.overwrite = true;
  o.threads = threads;
  uint64_t documents_per_run = 0;
  for (auto _ : state) {
    auto r = Pack(o, **tokenizer);
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      return;
    }
    documents_per_run = r->manifest.total_documents();
  }
  double runs = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(input_bytes * runs));
  state.counters["MB/s"] =
      benchmark::Counter(input_bytes * runs / 1e6, benchmark::Counter::kIsRate);
  state.counters["MB/s/thread"] =
      benchmark::Counter(input_bytes * runs / 1e6 / threads, benchmark::Counter::kIsRate);
  state.counters["docs/s"] =
      benchmark::Counter(documents_per_run * runs, benchmark::Counter::kIsRate);
}

void BM_PackJsonlBytes(benchmark::State& state) {
  Fixture& f = Fixture::Get();
  RunPack(state, "bytes", f.corpus, f.corpus_bytes);
}

void BM_PackJsonlSentencePiece(benchmark::State& state) {
  Fixture& f = Fixture::Get();
  RunPack(state, kSampleDir + "/sample.model", f.corpus, f.corpus_bytes);
}

void BM_PackSmallFilesBytes(benchmark::State& state) {
  Fixture& f = Fixture::Get();
  RunPack(state, "bytes", f.small_dir, f.small_bytes);
}

BENCHMARK(BM_PackJsonlBytes)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PackJsonlSentencePiece)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PackSmallFilesBytes)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace stoker

BENCHMARK_MAIN();
