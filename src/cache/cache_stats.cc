#include "cache/cache_stats.h"

#include <nlohmann/json.hpp>

#include "common/file_lock.h"
#include "common/file_util.h"

namespace stoker::cache {
namespace {

// The counters in file order: one table for reading, writing and adding.
struct Field {
  const char* name;
  uint64_t CacheStats::*member;
};
constexpr Field kCounters[] = {
    {"hits", &CacheStats::hits},
    {"misses", &CacheStats::misses},
    {"downloads", &CacheStats::downloads},
    {"bytes_downloaded", &CacheStats::bytes_downloaded},
    {"refetches", &CacheStats::refetches},
    {"evictions", &CacheStats::evictions},
    {"reverified", &CacheStats::reverified},
};

Result<CacheStats> ParseStats(const CacheLayout& layout) {
  CacheStats stats;
  if (!PathExists(layout.stats_path())) return stats;
  STOKER_ASSIGN_OR_RETURN(std::string text, ReadFileToString(layout.stats_path()));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Corruption(layout.stats_path() + ": not a JSON object");
  for (const Field& f : kCounters) {
    if (j.contains(f.name) && j[f.name].is_number_unsigned()) {
      stats.*f.member = j[f.name].get<uint64_t>();
    }
  }
  if (j.contains("budget_bytes") && j["budget_bytes"].is_number_unsigned()) {
    stats.budget_bytes = j["budget_bytes"].get<uint64_t>();
  }
  return stats;
}

}  // namespace

double CacheStats::hit_rate() const {
  const uint64_t total = hits + misses;
  return total == 0 ? 0.0 : static_cast<double>(hits) / static_cast<double>(total);
}

void CacheStats::AddCounts(const CacheStats& delta) {
  for (const Field& f : kCounters) this->*f.member += delta.*f.member;
}

Status AddToStatsFile(const CacheLayout& layout, const CacheStats& delta, uint64_t budget_bytes) {
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<FileLock> lock,
                          FileLock::Acquire(layout.stats_lock_path(), LockMode::kExclusive));
  STOKER_ASSIGN_OR_RETURN(CacheStats stats, ParseStats(layout));
  stats.AddCounts(delta);
  nlohmann::json j = nlohmann::json::object();
  for (const Field& f : kCounters) j[f.name] = stats.*f.member;
  j["budget_bytes"] = budget_bytes;
  return WriteFileAtomically(layout.stats_path(), j.dump(2) + "\n", /*durable=*/false);
}

Result<CacheStats> ReadStatsFile(const CacheLayout& layout) {
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<FileLock> lock,
                          FileLock::Acquire(layout.stats_lock_path(), LockMode::kShared));
  return ParseStats(layout);
}

}  // namespace stoker::cache
