// Benchmarks for the format layer; they print figures and assert nothing.
//   stoker_dataset_benchmark [--benchmark_filter=...]
// - OpenDataset/10000: open a 10,000-shard stoker dataset and read its first document (the
//   docs/design.md start-up target is "first batch <= 1 s on 10,000 shards").
// - MegatronWriter: shard write throughput (uint16, 1,000-token documents, fsync included).
// - RandomDocumentReads: documents/s and tokens/s reading random documents of a dataset.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <vector>

#include "common/file_util.h"
#include "common/temp_dir.h"
#include "format/megatron_writer.h"
#include "format/stoker_dataset.h"

namespace stoker {
namespace {

// A dataset of `shards` shards of `docs_per_shard` 1,000-token documents. Shard 0 is written with
// MegatronWriter; the others are hard links to it (opening still maps each one separately).
std::unique_ptr<TempDir> MakeDataset(int shards, int docs_per_shard) {
  auto dir = TempDir::Create("stoker-bench-");
  if (!dir.ok()) std::abort();
  Manifest m;
  m.tokenizer = {"bytes", "bytes", 257, 256, ""};
  auto w = MegatronWriter::Create((*dir)->Join("s-0"), TokenDType::kUint16);
  std::vector<int32_t> doc(1000);
  for (int d = 0; d < docs_per_shard; ++d) {
    for (size_t i = 0; i < doc.size(); ++i) doc[i] = static_cast<int32_t>((d + i) % 257);
    if (!(*w)->AddDocument(doc).ok()) std::abort();
  }
  ShardInfo info = *(*w)->Finish();
  for (int s = 0; s < shards; ++s) {
    std::string name = "s-" + std::to_string(s);
    if (s > 0) {
      for (const char* ext : {".bin", ".idx"}) {
        if (::link((*dir)->Join("s-0" + std::string(ext)).c_str(),
                   (*dir)->Join(name + ext).c_str()) != 0) {
          std::abort();
        }
      }
    }
    info.prefix = name;
    m.shards.push_back(info);
  }
  if (!WriteManifest((*dir)->path(), m).ok()) std::abort();
  return std::move(*dir);
}

void BM_OpenDataset(benchmark::State& state) {
  auto dir = MakeDataset(static_cast<int>(state.range(0)), 4);
  std::vector<int32_t> first(1000);
  for (auto _ : state) {
    auto ds = StokerDataset::Open(dir->path());
    if (!ds.ok() || !(*ds)->Read(0, 0, 1000, first.data()).ok()) {
      state.SkipWithError("open failed");
      break;
    }
    benchmark::DoNotOptimize(first.data());
  }
  state.counters["shards"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_OpenDataset)->Arg(100)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_MegatronWriter(benchmark::State& state) {
  auto dir = TempDir::Create("stoker-bench-");
  std::vector<int32_t> doc(1000);
  for (size_t i = 0; i < doc.size(); ++i) doc[i] = static_cast<int32_t>(i * 37 % 50000);
  const int docs = 32 * 1024;  // 64 MiB of uint16 tokens
  for (auto _ : state) {
    auto w = MegatronWriter::Create((*dir)->Join("w"), TokenDType::kUint16);
    for (int d = 0; d < docs; ++d) {
      if (!(*w)->AddDocument(doc).ok()) std::abort();
    }
    if (!(*w)->Finish().ok()) std::abort();
  }
  state.SetBytesProcessed(state.iterations() * docs * doc.size() * 2);
}
BENCHMARK(BM_MegatronWriter)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_RandomDocumentReads(benchmark::State& state) {
  auto dir = MakeDataset(64, 512);
  auto ds = StokerDataset::Open(dir->path());
  if (!ds.ok()) std::abort();
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<uint64_t> pick(0, (*ds)->num_documents() - 1);
  std::vector<int32_t> out(1000);
  uint64_t tokens = 0;
  for (auto _ : state) {
    uint64_t d = pick(rng);
    uint64_t len = (*ds)->document_length(d);
    if (!(*ds)->Read(d, 0, len, out.data()).ok()) std::abort();
    tokens += len;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RandomDocumentReads);

}  // namespace
}  // namespace stoker

BENCHMARK_MAIN();
