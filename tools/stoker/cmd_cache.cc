// `stoker cache DIR`: what a node-local cache (src/cache/) holds, its budget, used bytes and hit
// rate summed over every process that used it; `--clear` removes the cache's own files only.
#include "cmd_cache.h"

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cache/cache_inspect.h"
#include "cli_common.h"
#include "commands.h"
#include "common/human_size.h"

namespace stoker::cli {
namespace {

nlohmann::json ReportJson(const cache::CacheReport& report) {
  const cache::CacheStats& s = report.stats;
  nlohmann::json objects = nlohmann::json::array();
  for (const cache::CachedObjectInfo& o : report.objects) {
    objects.push_back(
        {{"uri", o.uri}, {"size_bytes", o.size_bytes}, {"xxh3", o.xxh3}, {"in_use", o.in_use}});
  }
  return {{"dir", report.dir},          {"budget_bytes", s.budget_bytes},
          {"used_bytes", s.used_bytes}, {"temp_bytes", report.temp_bytes},
          {"objects", objects},         {"hits", s.hits},
          {"misses", s.misses},         {"hit_rate", s.hit_rate()},
          {"downloads", s.downloads},   {"bytes_downloaded", s.bytes_downloaded},
          {"refetches", s.refetches},   {"evictions", s.evictions},
          {"reverified", s.reverified}};
}

void PrintReport(const cache::CacheReport& report, std::FILE* out) {
  const cache::CacheStats& s = report.stats;
  std::fprintf(out, "cache %s: %zu objects, %s used of a %s budget", report.dir.c_str(),
               report.objects.size(), FormatSize(s.used_bytes).c_str(),
               FormatSize(s.budget_bytes).c_str());
  if (report.temp_bytes > 0) {
    std::fprintf(out, " (%s in downloads)", FormatSize(report.temp_bytes).c_str());
  }
  std::fprintf(
      out,
      "\nhit rate %.1f%% (%llu hits, %llu misses); %llu downloads (%s), %llu "
      "refetches, %llu evictions, %llu re-hashed after a reboot\n",
      100.0 * s.hit_rate(), static_cast<unsigned long long>(s.hits),
      static_cast<unsigned long long>(s.misses), static_cast<unsigned long long>(s.downloads),
      FormatSize(s.bytes_downloaded).c_str(), static_cast<unsigned long long>(s.refetches),
      static_cast<unsigned long long>(s.evictions), static_cast<unsigned long long>(s.reverified));
  for (const cache::CachedObjectInfo& o : report.objects) {
    std::fprintf(out, "%10s  %s  %s%s\n", FormatSize(o.size_bytes).c_str(), o.xxh3.c_str(),
                 o.uri.c_str(), o.in_use ? "  (in use)" : "");
  }
}

}  // namespace

int RunCacheCommand(const std::string& dir, bool json, bool clear, std::FILE* out) {
  if (clear) {
    Result<cache::ClearReport> cleared = cache::ClearCache(dir);
    if (!cleared.ok()) return ReportError("cache --clear", cleared.status());
    if (json) {
      nlohmann::json j = {{"dir", dir},
                          {"removed_objects", cleared->removed_objects},
                          {"removed_bytes", cleared->removed_bytes},
                          {"in_use", cleared->in_use}};
      std::fprintf(out, "%s\n", j.dump().c_str());
    } else {
      std::fprintf(out, "cache %s: removed %llu objects (%s)", dir.c_str(),
                   static_cast<unsigned long long>(cleared->removed_objects),
                   FormatSize(cleared->removed_bytes).c_str());
      if (cleared->in_use > 0) {
        std::fprintf(out, "; kept %llu in use by running processes",
                     static_cast<unsigned long long>(cleared->in_use));
      }
      std::fprintf(out, "\n");
    }
    return kExitOk;
  }
  Result<cache::CacheReport> report = cache::InspectCache(dir);
  if (!report.ok()) return ReportError("cache", report.status());
  if (json) {
    std::fprintf(out, "%s\n", ReportJson(*report).dump().c_str());
  } else {
    PrintReport(*report, out);
  }
  return kExitOk;
}

void AddCacheCommand(CLI::App& app, int* exit_code) {
  struct Args {
    std::string dir;
    bool json = false;
    bool clear = false;
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "cache",
      "Show what a node-local cache directory holds: objects, budget, used bytes, hit rate");
  sub->add_option("DIR", args->dir, "the cache directory (--cache-dir of the loader)")
      ->required()
      ->transform(LocalFile());
  sub->add_flag("--json", args->json, "print one JSON object");
  sub->add_flag("--clear", args->clear,
                "remove the cached objects and counters (only the cache's own files; objects "
                "that running processes use are kept)");
  sub->footer(
      "The counters (hits, misses, downloads, refetches, evictions) are summed over every process\n"
      "that used the directory; the budget is the one its latest user opened it with.\n"
      "Exit status: 0 ok, 2 error (not a cache, or a directory holding foreign files).\n"
      "Examples:\n"
      "  stoker cache /local_nvme/stoker-cache\n"
      "  stoker cache /local_nvme/stoker-cache --json\n"
      "  stoker cache /local_nvme/stoker-cache --clear");
  sub->callback([args, exit_code] {
    *exit_code = RunCacheCommand(args->dir, args->json, args->clear, stdout);
  });
}

}  // namespace stoker::cli
