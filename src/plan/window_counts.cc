#include "plan/window_counts.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "common/cache_root.h"
#include "common/env.h"
#include "common/file_util.h"
#include "common/hash.h"

namespace stoker::plan {
namespace {

constexpr char kMagic[8] = {'S', 'T', 'K', 'W', 'C', 'N', 'T', '1'};
constexpr uint64_t kChunkWindows = 64;  // windows a thread takes at a time

// The file's bytes before its checksum: magic, the key, then the counts.
std::string Serialize(const WindowCountsKey& key, const std::vector<uint64_t>& counts) {
  std::string out(kMagic, sizeof kMagic);
  auto put = [&](uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); };
  std::string fp = key.fingerprint;
  fp.resize(16, '\0');
  out += fp;
  put(key.dataset);
  put(key.epoch);
  put(key.num_windows);
  for (uint64_t c : counts) put(c);
  return out;
}

}  // namespace

std::vector<uint64_t> CountWindowsInParallel(uint64_t first, uint64_t last, unsigned threads,
                                             const std::function<uint64_t(uint64_t)>& amount) {
  std::vector<uint64_t> out(last > first ? last - first : 0);
  std::atomic<uint64_t> next{first};
  auto work = [&] {
    for (;;) {
      const uint64_t begin = next.fetch_add(kChunkWindows);
      if (begin >= last) return;
      const uint64_t end = std::min(last, begin + kChunkWindows);
      for (uint64_t w = begin; w < end; ++w) out[w - first] = amount(w);
    }
  };
  const uint64_t chunks = (out.size() + kChunkWindows - 1) / kChunkWindows;
  const unsigned n = static_cast<unsigned>(std::min<uint64_t>(std::max(threads, 1u), chunks));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return out;
}

unsigned CountingThreads() {
  Result<std::optional<uint64_t>> env = EnvNumber("STOKER_PLAN_THREADS");
  if (env.ok() && env->has_value() && **env >= 1) return static_cast<unsigned>(**env);
  return std::max(1u, std::thread::hardware_concurrency());
}

std::optional<std::string> CacheDirectory() { return CacheDirFor(CacheKind::kPlan); }

uint64_t CacheMinWindows() {
  Result<std::optional<uint64_t>> env = EnvNumber("STOKER_PLAN_CACHE_MIN_WINDOWS");
  if (env.ok() && env->has_value()) return **env;
  return 256;
}

std::string WindowCountsKey::FileName() const {
  return "plan-" + fingerprint + "-d" + std::to_string(dataset) + "-e" + std::to_string(epoch) +
         "-w" + std::to_string(num_windows) + ".counts";
}

std::optional<std::string> ReadCacheFile(const std::string& dir, const std::string& name,
                                         const std::string& head, uint64_t body_bytes) {
  Result<std::string> text = ReadFileToString(JoinPath(dir, name));
  if (!text.ok()) return std::nullopt;
  const uint64_t body = head.size() + body_bytes;
  if (text->size() != body + 8 || text->compare(0, head.size(), head) != 0) return std::nullopt;
  uint64_t checksum;
  std::memcpy(&checksum, text->data() + body, 8);
  if (Xxh3(text->data(), body) != checksum) return std::nullopt;
  return text->substr(head.size(), body_bytes);
}

void WriteCacheFile(const std::string& dir, const std::string& name, std::string bytes) {
  if (!MakeDirectories(dir).ok()) return;
  const uint64_t checksum = Xxh3(bytes.data(), bytes.size());
  bytes.append(reinterpret_cast<const char*>(&checksum), 8);
  // Best effort; the ranks of a node may all write the same file at once (a temporary file each).
  (void)WriteFileAtomically(JoinPath(dir, name), bytes);
}

std::optional<std::vector<uint64_t>> ReadWindowCounts(const std::string& dir,
                                                      const WindowCountsKey& key) {
  std::optional<std::string> body =
      ReadCacheFile(dir, key.FileName(), Serialize(key, {}), 8 * key.num_windows);
  if (!body) return std::nullopt;
  std::vector<uint64_t> counts(key.num_windows);
  std::memcpy(counts.data(), body->data(), body->size());
  return counts;
}

void WriteWindowCounts(const std::string& dir, const WindowCountsKey& key,
                       const std::vector<uint64_t>& counts) {
  WriteCacheFile(dir, key.FileName(), Serialize(key, counts));
}

}  // namespace stoker::plan
