#include "stream/prescan.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <thread>

#include "chat/chat_encoder.h"
#include "common/cache_root.h"
#include "common/env.h"
#include "common/file_util.h"
#include "common/hash.h"
#include "common/load.h"

namespace stoker::stream {
namespace {

constexpr char kScanMagic[] = "STKSCAN1\n";
constexpr size_t kScanMagicSize = sizeof(kScanMagic) - 1;

// One file's documents in order: where each starts (JSONL: byte offset; else 0), its tokens and
// its bytes; and the records that yield no document (JSONL: their byte offsets; record shards:
// their indices), sorted.
struct FileScan {
  std::vector<uint64_t> offsets;
  std::vector<uint32_t> tokens;
  std::vector<uint32_t> bytes;
  std::vector<uint64_t> skipped;
  // Chat data: each document's trained targets (ChatTrainedTargets); else empty.
  std::vector<uint32_t> trained;
};

// A chat document's trained targets: the positions 1..L-1 inside its loss mask's spans (the
// labels that are not -100, whichever way a step cuts it into pieces: a piece that ends inside
// its document reads the next token's label).
uint64_t ChatTrainedTargets(const std::vector<int32_t>& spans) {
  uint64_t n = 0;
  for (size_t i = 0; i + 1 < spans.size(); i += 2) {
    const int64_t begin = std::max<int64_t>(spans[i], 1);
    if (spans[i + 1] > begin) n += static_cast<uint64_t>(spans[i + 1] - begin);
  }
  return n;
}

struct FileStat {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};

Result<FileStat> Stat(const std::string& path) {
  std::error_code ec;
  FileStat st;
  st.size = std::filesystem::file_size(path, ec);
  if (ec) return NotFound(path + ": " + ec.message());
  const auto t = std::filesystem::last_write_time(path, ec);
  if (ec) return NotFound(path + ": " + ec.message());
  st.mtime_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  return st;
}

// Everything besides the file that changes its documents' lengths.
std::string ScanIdentity(const StreamContext& ctx) {
  const TokenizerIdentity& id = ctx.tokenizer->identity();
  const ReaderOptions& r = ctx.config.reader;
  return id.kind + "|" + id.name + "|" + id.checksum + "|field=" + r.encoder.text_field +
         "|utf8=" + std::string(Utf8PolicyName(r.encoder.utf8)) +
         "|skip=" + (r.encoder.skip_bad_lines ? "1" : "0") + (r.skip_corrupt_shards ? "1" : "0") +
         (r.chat ? "|" + r.chat->identity() : std::string());
}

std::string AbsolutePath(const std::string& path) {
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.lexically_normal().string();
}

std::string CachePath(const std::string& data, const std::string& dir) {
  const std::string abs = AbsolutePath(data);
  return JoinPath(dir, Xxh3Hex(Xxh3(abs.data(), abs.size())) + ".stoker-scan");
}

// Hidden, so that a directory input (whose walk skips names starting with '.') never reads it
// as a document.
std::string BesidePath(const std::string& data) {
  const std::filesystem::path p(data);
  return (p.parent_path() / ("." + p.filename().string() + ".stoker-scan")).string();
}

// The scan in `file` if it is one of `data` as it is now, read with `identity`; else nullopt
// (missing, stale or unreadable files are not errors: the data is read instead).
std::optional<FileScan> ReadScan(const std::string& file, const std::string& data,
                                 const FileStat& st, const std::string& identity, bool chat) {
  Result<std::string> bytes = ReadFileToString(file);
  if (!bytes.ok() || bytes->compare(0, kScanMagicSize, kScanMagic) != 0) return std::nullopt;
  const size_t eol = bytes->find('\n', kScanMagicSize);
  if (eol == std::string::npos) return std::nullopt;
  nlohmann::json h = nlohmann::json::parse(bytes->begin() + kScanMagicSize, bytes->begin() + eol,
                                           nullptr, /*allow_exceptions=*/false);
  if (!h.is_object() || h.value("version", 0) != 2 || h.value("path", "") != AbsolutePath(data) ||
      h.value("size_bytes", uint64_t{0}) != st.size ||
      h.value("mtime_ns", int64_t{0}) != st.mtime_ns || h.value("identity", "") != identity) {
    return std::nullopt;
  }
  const uint64_t n = h.value("documents", uint64_t{0});
  const uint64_t skipped = h.value("skipped", uint64_t{0});
  // A chat scan keeps each document's trained targets too (a scan written before it is stale).
  const uint64_t trained = h.value("trained", uint64_t{0});
  if (chat && trained != n) return std::nullopt;
  if (bytes->size() - eol - 1 != n * 16 + skipped * 8 + trained * 4) return std::nullopt;
  FileScan scan;
  const char* p = bytes->data() + eol + 1;
  for (uint64_t i = 0; i < n; ++i, p += 16) {
    scan.offsets.push_back(LoadAs<uint64_t>(p));
    scan.tokens.push_back(LoadAs<uint32_t>(p + 8));
    scan.bytes.push_back(LoadAs<uint32_t>(p + 12));
  }
  for (uint64_t i = 0; i < skipped; ++i, p += 8) scan.skipped.push_back(LoadAs<uint64_t>(p));
  if (chat) {
    for (uint64_t i = 0; i < trained; ++i, p += 4) scan.trained.push_back(LoadAs<uint32_t>(p));
  }
  return scan;
}

Status WriteScan(const std::string& file, const std::string& data, const FileStat& st,
                 const std::string& identity, const FileScan& scan) {
  const uint64_t tokens = std::accumulate(scan.tokens.begin(), scan.tokens.end(), uint64_t{0});
  const uint64_t bytes = std::accumulate(scan.bytes.begin(), scan.bytes.end(), uint64_t{0});
  nlohmann::json h = {{"version", 2},
                      {"path", AbsolutePath(data)},
                      {"size_bytes", st.size},
                      {"mtime_ns", st.mtime_ns},
                      {"identity", identity},
                      {"documents", scan.tokens.size()},
                      {"tokens", tokens},
                      {"bytes", bytes},
                      {"skipped", scan.skipped.size()}};
  if (!scan.trained.empty()) h["trained"] = scan.trained.size();
  std::string out = kScanMagic + h.dump() + "\n";
  for (size_t i = 0; i < scan.tokens.size(); ++i) {
    out.append(reinterpret_cast<const char*>(&scan.offsets[i]), 8);
    out.append(reinterpret_cast<const char*>(&scan.tokens[i]), 4);
    out.append(reinterpret_cast<const char*>(&scan.bytes[i]), 4);
  }
  for (uint64_t key : scan.skipped) out.append(reinterpret_cast<const char*>(&key), 8);
  for (uint32_t t : scan.trained) out.append(reinterpret_cast<const char*>(&t), 4);
  STOKER_RETURN_IF_ERROR(MakeDirectories(DirName(file)));
  return WriteFileAtomically(file, out);
}

// Shard `s`'s part of its file's scan: the documents (and skipped lines) whose line starts in its
// range.
FileScan ShardPart(const StreamShard& s, uint64_t file_size, const FileScan& f) {
  const bool whole = s.begin == 0 && s.end >= file_size;
  if (whole) return f;
  FileScan out;
  for (size_t i = 0; i < f.tokens.size(); ++i) {
    if (f.offsets[i] >= s.begin && f.offsets[i] < s.end) {
      out.tokens.push_back(f.tokens[i]);
      out.offsets.push_back(f.offsets[i]);
      out.bytes.push_back(f.bytes[i]);
      if (!f.trained.empty()) out.trained.push_back(f.trained[i]);
    }
  }
  for (uint64_t key : f.skipped) {
    if (key >= s.begin && key < s.end) out.skipped.push_back(key);
  }
  return out;
}

}  // namespace

std::string DefaultScanCacheDir() {
  return CacheDirFor(CacheKind::kStreamScan).value_or(std::string());
}

namespace {

// Every shard's part of the scan (from scan files or read), in the shards' order.
Result<std::vector<FileScan>> ScanEveryShard(const StreamContext& ctx,
                                             const PrescanOptions& options,
                                             PrescanSummary* summary) {
  PrescanSummary local;
  PrescanSummary& sum = summary ? *summary : local;
  const std::vector<StreamShard>& shards = ctx.shards;
  const size_t n = shards.size();
  const std::string identity = ScanIdentity(ctx);
  const bool chat = ctx.config.reader.chat != nullptr;
  std::map<uint32_t, std::vector<size_t>> by_file;  // input file -> its shards, in order
  for (size_t s = 0; s < n; ++s) by_file[shards[s].file].push_back(s);

  std::vector<FileScan> scans(n);
  std::vector<char> cached(n, 0);
  std::map<uint32_t, FileStat> stats;
  for (const auto& [file, idx] : by_file) {
    const std::string& path = shards[idx[0]].path;
    ++sum.files;
    Result<FileStat> st = Stat(path);
    if (!st.ok()) continue;  // the read below reports it
    stats[file] = *st;
    if (options.write) continue;  // writing: read the data again, whatever is cached
    std::optional<FileScan> scan;
    if (options.read_beside) scan = ReadScan(BesidePath(path), path, *st, identity, chat);
    if (!scan && !options.cache_dir.empty()) {
      scan = ReadScan(CachePath(path, options.cache_dir), path, *st, identity, chat);
    }
    if (!scan) continue;
    ++sum.files_from_cache;
    for (size_t s : idx) {
      scans[s] = ShardPart(shards[s], st->size, *scan);
      cached[s] = 1;
    }
  }

  // The rest is read: shards in parallel, one reader per thread, each into its own slot (so the
  // result does not depend on the thread count).
  std::vector<Status> status(n);
  std::atomic<size_t> next{0};
  auto scan = [&] {
    ShardReader reader(&shards, ctx.tokenizer.get(), ctx.config.reader);
    RawItem item;
    EncodedDocuments scratch;
    for (size_t s = next++; s < n; s = next++) {
      if (cached[s]) continue;
      FileScan& out = scans[s];
      Status st = reader.Open(static_cast<uint32_t>(s), 0, 0);
      while (st.ok()) {
        Result<bool> got = reader.NextRaw(&item);
        if (!got.ok()) st = got.status();
        if (!got.ok() || !*got) break;
        bool kept = false;
        st = reader.EncodeItem(item, &scratch, &kept);
        if (!st.ok()) break;
        if (!kept) {  // a record without a document: where it is, to cut the shard around it
          out.skipped.push_back(shards[s].records ? item.ref.record : item.ref.offset);
          continue;
        }
        const uint64_t bytes = item.raw.data.size() + item.raw.tokens.size() * sizeof(int32_t);
        out.offsets.push_back(item.ref.offset);
        out.tokens.push_back(static_cast<uint32_t>(scratch.tokens.size()));
        out.bytes.push_back(static_cast<uint32_t>(std::min<uint64_t>(bytes, UINT32_MAX)));
        if (chat) {
          out.trained.push_back(static_cast<uint32_t>(ChatTrainedTargets(scratch.spans)));
        }
      }
      status[s] = st;
    }
  };
  const int per_rank = options.threads > 0 ? options.threads : DefaultThreadsPerRank();
  const size_t threads = std::min<size_t>(n, static_cast<size_t>(per_rank));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(scan);
  scan();
  for (std::thread& t : pool) t.join();
  for (const Status& st : status) STOKER_RETURN_IF_ERROR(st);

  for (const auto& [file, idx] : by_file) {
    for (size_t s : idx) {
      sum.documents += scans[s].tokens.size();
      for (uint32_t len : scans[s].tokens) sum.tokens += len;
      for (uint32_t b : scans[s].bytes) sum.bytes += b;
    }
    if (!options.write || cached[idx[0]] || !stats.count(file)) continue;
    FileScan whole;
    for (size_t s : idx) {
      const FileScan& part = scans[s];
      whole.offsets.insert(whole.offsets.end(), part.offsets.begin(), part.offsets.end());
      whole.tokens.insert(whole.tokens.end(), part.tokens.begin(), part.tokens.end());
      whole.bytes.insert(whole.bytes.end(), part.bytes.begin(), part.bytes.end());
      whole.skipped.insert(whole.skipped.end(), part.skipped.begin(), part.skipped.end());
      whole.trained.insert(whole.trained.end(), part.trained.begin(), part.trained.end());
    }
    const std::string& path = shards[idx[0]].path;
    if (!options.write_beside && options.cache_dir.empty()) {
      return InvalidArgument("stream pre-scan: no cache directory to write to (caching is off)");
    }
    const std::string out =
        options.write_beside ? BesidePath(path) : CachePath(path, options.cache_dir);
    STOKER_RETURN_IF_ERROR(WriteScan(out, path, stats[file], identity, whole));
    sum.written.push_back(out);
  }
  return scans;
}

}  // namespace

Result<std::vector<std::vector<uint32_t>>> PrescanShards(
    const StreamContext& ctx, const PrescanOptions& options, PrescanSummary* summary,
    std::vector<std::vector<uint64_t>>* offsets) {
  STOKER_ASSIGN_OR_RETURN(std::vector<FileScan> scans, ScanEveryShard(ctx, options, summary));
  std::vector<std::vector<uint32_t>> lengths(scans.size());
  if (offsets != nullptr) offsets->assign(scans.size(), {});
  for (size_t s = 0; s < scans.size(); ++s) {
    lengths[s] = std::move(scans[s].tokens);
    if (offsets != nullptr) (*offsets)[s] = std::move(scans[s].offsets);
  }
  return lengths;
}

Result<ShardScan> ScanShards(const StreamContext& ctx, const PrescanOptions& options,
                             PrescanSummary* summary) {
  STOKER_ASSIGN_OR_RETURN(std::vector<FileScan> scans, ScanEveryShard(ctx, options, summary));
  ShardScan out;
  for (size_t s = 0; s < scans.size(); ++s) {
    const StreamShard& sh = ctx.shards[s];
    out.lengths.push_back(std::move(scans[s].tokens));
    out.trained.push_back(std::move(scans[s].trained));
    // Offsets and skipped records are kept where a deal may cut the shard (deal.h).
    const bool jsonl = sh.jsonl && !sh.records;
    out.offsets.push_back(jsonl ? std::move(scans[s].offsets) : std::vector<uint64_t>());
    out.skipped.push_back(jsonl || sh.records ? std::move(scans[s].skipped)
                                              : std::vector<uint64_t>());
  }
  return out;
}

}  // namespace stoker::stream
