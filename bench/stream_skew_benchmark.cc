// What one streaming epoch delivers on skewed shards (issue 26): 7 JSONL files of which two hold
// 91% of the bytes, 4,196 documents of 10 to 600 bytes (the bytes tokenizer: a token per byte,
// plus EOS), every rank of a world of W opened in one process. Prints the steps per rank and the
// documents and tokens of the epoch that the ranks' rows delivered (pieces of stream epoch 0).
// The files are .jsonl.zst (never cut into byte ranges), or .jsonl with --zst 0.
//   stream_skew_benchmark [--world 3] [--seq-len 4096] [--batch 2] [--pack bestfit] [--zst 1]
#include <unistd.h>
#include <zstd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "stream/prescan.h"
#include "stream/row_count.h"
#include "stream/stream_planner.h"

namespace {

using stoker::LoaderOptions;
using stoker::OpenTokenizer;
using stoker::PackMode;
using stoker::StreamOptions;
using namespace stoker::stream;

std::vector<std::string> WriteCorpus(const std::filesystem::path& dir, bool zst) {
  const int docs[] = {1900, 1920, 80, 80, 76, 70, 70};  // 4,196; the first two: 91% of bytes
  std::mt19937 rng(26);
  std::vector<std::string> paths;
  for (int f = 0; f < 7; ++f) {
    const std::string path =
        (dir / ("part-" + std::to_string(f) + (zst ? ".jsonl.zst" : ".jsonl"))).string();
    std::string body;
    for (int i = 0; i < docs[f]; ++i) {
      std::string t = "file " + std::to_string(f) + " doc " + std::to_string(i) + ":";
      const size_t len = 10 + rng() % 591;
      while (t.size() < len) t += static_cast<char>('a' + rng() % 26);
      body += "{\"text\": \"" + t.substr(0, len) + "\"}\n";
    }
    if (zst) {
      std::string z(ZSTD_compressBound(body.size()), '\0');
      z.resize(ZSTD_compress(z.data(), z.size(), body.data(), body.size(), 3));
      body = std::move(z);
    }
    std::ofstream(path, std::ios::binary) << body;
    paths.push_back(path);
  }
  return paths;
}

struct Delivered {
  std::vector<uint64_t> steps;  // per rank
  uint64_t docs = 0, tokens = 0, docs_got = 0, tokens_got = 0;
  uint64_t twice = 0;  // tokens delivered again (must be 0)
};

// Every rank's epoch 0: what the pieces of stream epoch 0 deliver.
bool Measure(const StreamOptions& so, const LoaderOptions& base, Delivered* out) {
  // Per document, which of its tokens were delivered.
  std::map<std::pair<std::string, uint64_t>, std::vector<uint8_t>> delivered;
  for (uint32_t r = 0; r < base.world_size; ++r) {
    LoaderOptions lo = base;
    lo.rank = r;
    auto p = StreamPlanner::Create(so, lo);
    if (!p.ok()) {
      std::fprintf(stderr, "%s\n", p.status().ToString().c_str());
      return false;
    }
    out->docs = (*p)->prescan_summary().documents;
    out->tokens = (*p)->prescan_summary().tokens;
    const uint64_t steps = (*p)->steps_per_epoch(0);
    out->steps.push_back(steps);
    for (uint64_t s = 0; s < steps; ++s) {
      auto rows = (*p)->RowsAt({0, s * lo.batch_size * lo.world_size});
      if (!rows.ok()) {
        std::fprintf(stderr, "%s\n", rows.status().ToString().c_str());
        return false;
      }
      for (const PackedRow& row : *rows) {
        for (const PackedPiece& piece : row) {
          if (piece.stream_epoch != 0) continue;
          std::vector<uint8_t>& t =
              delivered[{(*p)->shards()[piece.ref.shard].path, piece.ref.offset}];
          t.resize(piece.tokens->size());
          for (uint64_t i = piece.offset; i < piece.offset + piece.length; ++i) {
            out->twice += t[i];
            t[i] = 1;
          }
        }
      }
    }
  }
  out->docs_got = delivered.size();
  for (const auto& [doc, t] : delivered) {
    for (uint8_t n : t) out->tokens_got += n;
  }
  return true;
}

void Print(const char* what, const Delivered& d, uint64_t docs, uint64_t tokens) {
  std::printf("%s: steps per rank", what);
  for (uint64_t s : d.steps) std::printf(" %llu", static_cast<unsigned long long>(s));
  std::printf(
      "; %llu of %llu documents delivered (%llu not), %llu of %llu tokens (%.1f%%), %llu "
      "tokens twice\n",
      static_cast<unsigned long long>(d.docs_got), static_cast<unsigned long long>(docs),
      static_cast<unsigned long long>(docs - d.docs_got),
      static_cast<unsigned long long>(d.tokens_got), static_cast<unsigned long long>(tokens),
      100.0 * d.tokens_got / tokens, static_cast<unsigned long long>(d.twice));
}

}  // namespace

int main(int argc, char** argv) {
  LoaderOptions lo;
  lo.world_size = 3;
  lo.seq_len = 4096;
  lo.batch_size = 2;
  lo.pack = PackMode::kBestFit;
  lo.num_workers = 2;
  bool zst = true;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--world")) lo.world_size = std::stoul(argv[i + 1]);
    if (!std::strcmp(argv[i], "--seq-len")) lo.seq_len = std::stoull(argv[i + 1]);
    if (!std::strcmp(argv[i], "--batch")) lo.batch_size = std::stoull(argv[i + 1]);
    if (!std::strcmp(argv[i], "--zst")) zst = std::string(argv[i + 1]) != "0";
    if (!std::strcmp(argv[i], "--pack")) {
      const std::string p = argv[i + 1];
      lo.pack = p == "concat" ? PackMode::kConcat
                : p == "pad"  ? PackMode::kPad
                              : PackMode::kBestFit;
    }
  }
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("stoker_skew_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  StreamOptions so;
  so.inputs = WriteCorpus(dir, zst);
  so.tokenizer = "bytes";
  so.scan_cache_dir = "off";
  Delivered d;
  if (!Measure(so, lo, &d)) return 1;
  std::printf(
      "%s, world %u, seq_len %llu, batch %llu, pack %d: %llu documents, %llu tokens, "
      "enough for %llu steps\n",
      zst ? ".jsonl.zst" : ".jsonl", lo.world_size, static_cast<unsigned long long>(lo.seq_len),
      static_cast<unsigned long long>(lo.batch_size), static_cast<int>(lo.pack),
      static_cast<unsigned long long>(d.docs), static_cast<unsigned long long>(d.tokens),
      static_cast<unsigned long long>(d.tokens / (lo.seq_len * lo.batch_size * lo.world_size)));
  Print("epoch 0", d, d.docs, d.tokens);
  std::filesystem::remove_all(dir);
  return 0;
}
