// One object read through the storage layer in-process, the way `stoker storage cat` reads it
// (bench/cache_vs_boto3.py --cat runs it beside boto3 on a local moto server).
//
//   storage_read_benchmark URI [--rounds N] [--part-mib M] [--threads T]
//
// Opens the object with its size known (no HEAD), then for each round reads it whole into memory
// with T threads taking parts of M MiB (T = 1: one part after another). Prints one JSON line per
// round: MiB/s, seconds and the GETs it made.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "storage/open_backend.h"

int main(int argc, char** argv) {
  using namespace stoker;
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: storage_read_benchmark URI [--rounds N] [--part-mib M] [--threads T]\n");
    return 2;
  }
  int rounds = 5, threads = 1;
  size_t part_mib = 8;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--part-mib") == 0) part_mib = std::strtoul(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--threads") == 0) threads = std::max(1, std::atoi(argv[i + 1]));
  }
  storage::StorageMetrics metrics;
  storage::BackendOptions options;
  options.metrics = &metrics;
  options.s3.read_part_bytes = part_mib << 20;
  options.http.part_bytes = part_mib << 20;
  auto backend = storage::OpenBackendForUri(argv[1], options);
  if (!backend.ok()) {
    std::fprintf(stderr, "storage_read_benchmark: %s\n", backend.status().ToString().c_str());
    return 2;
  }
  auto info = (*backend)->Stat(argv[1]);
  if (!info.ok()) {
    std::fprintf(stderr, "storage_read_benchmark: %s\n", info.status().ToString().c_str());
    return 2;
  }
  const uint64_t size = info->size_bytes;
  auto source = (*backend)->OpenForReadWithSize(argv[1], size);
  if (!source.ok()) return 2;
  std::vector<char> buffer(size);
  const uint64_t part = part_mib << 20;
  for (int r = 0; r < rounds; ++r) {
    const uint64_t gets_before =
        metrics.Snapshot().requests[static_cast<int>(storage::RequestKind::kGet)];
    const auto start = std::chrono::steady_clock::now();
    std::atomic<uint64_t> next{0};
    std::atomic<bool> failed{false};
    auto work = [&] {
      for (uint64_t at; (at = next.fetch_add(part)) < size;) {
        const size_t n = static_cast<size_t>(std::min(part, size - at));
        if (!ReadExactlyAt(**source, at, n, buffer.data() + at, "object").ok()) failed = true;
      }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const uint64_t gets =
        metrics.Snapshot().requests[static_cast<int>(storage::RequestKind::kGet)] - gets_before;
    std::printf(
        "{\"round\":%d,\"bytes\":%llu,\"threads\":%d,\"part_mib\":%zu,\"s\":%.4f,"
        "\"MiBps\":%.1f,\"gets\":%llu,\"ok\":%s}\n",
        r, static_cast<unsigned long long>(size), threads, part_mib, s, size / s / (1 << 20),
        static_cast<unsigned long long>(gets), failed ? "false" : "true");
  }
  return 0;
}
