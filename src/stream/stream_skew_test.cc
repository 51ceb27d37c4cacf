// Streaming epochs on skewed shard sizes (issue 26): each epoch's documents are dealt to ranks
// balanced by the pre-scan's tokens, cut inside any shard (deal.h), so what an epoch end leaves
// undelivered is bounded by one global batch plus, per rank, the packer's window and one document
// (docs/streaming.md, "Equal steps"), whatever the shard sizes: one shard with 60% of the tokens,
// a thousand shards of 1 KB, a single huge .zst file, 7 shards of which two hold 91%. Checked
// through the delivered pieces at W = 1, 3, 8 and 64: no token is delivered twice in the epoch.
#include <gtest/gtest.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>

#include "stream/deal.h"
#include "stream/prescan.h"
#include "stream/stream_planner.h"
#include "stream/stream_test_util.h"

namespace stoker::stream {
namespace {

using testing::TempDir;

constexpr uint64_t kSeqLen = 64, kSkewBatch = 2;

// A JSONL line whose text has `bytes` bytes (the bytes tokenizer: bytes + EOS tokens).
std::string Line(int file, int i, int bytes) {
  std::string t = "f" + std::to_string(file) + "d" + std::to_string(i) + " ";
  while (static_cast<int>(t.size()) < bytes) t += static_cast<char>('a' + (t.size() * 7 + i) % 26);
  return "{\"text\": \"" + t.substr(0, std::max<int>(bytes, 1)) + "\"}\n";
}

// `docs[f]` documents of 20..140 bytes in file f (seeded), every 37th line empty (a record that
// yields no document, so cuts must count it).
std::string Body(int file, int docs, std::mt19937* rng) {
  std::string body;
  for (int i = 0; i < docs; ++i) {
    if (i % 37 == 36) body += "\n";
    body += Line(file, i, 20 + static_cast<int>((*rng)() % 121));
  }
  return body;
}

std::string Zstd(const std::string& body) {
  std::string z(ZSTD_compressBound(body.size()), '\0');
  z.resize(ZSTD_compress(z.data(), z.size(), body.data(), body.size(), 3));
  return z;
}

std::vector<std::string> WriteFiles(const TempDir& dir, const std::vector<int>& docs,
                                    bool zstd = false) {
  std::mt19937 rng(static_cast<uint32_t>(docs.size() * 131 + docs[0]));
  std::vector<std::string> paths;
  for (size_t f = 0; f < docs.size(); ++f) {
    const std::string body = Body(static_cast<int>(f), docs[f], &rng);
    const std::string name = "part-" + std::to_string(f) + (zstd ? ".jsonl.zst" : ".jsonl");
    paths.push_back(dir.Write(name, zstd ? Zstd(body) : body));
  }
  return paths;
}

// Writes every file's scan into `cache` once, so that the many ranks' planners read it.
void WriteScans(const std::vector<std::string>& paths, const std::string& cache,
                const std::string& text_field = StreamOptions{}.text_field) {
  StreamContext ctx;
  ctx.shards = MakeShards(paths, 1).value();
  ctx.tokenizer = OpenTokenizer("bytes").value();
  ctx.config.reader.encoder.text_field = text_field;
  ctx.config.reader.encoder.utf8 = StreamOptions{}.utf8;
  PrescanOptions po;
  po.cache_dir = cache;
  po.write = true;
  ASSERT_TRUE(PrescanShards(ctx, po).ok());
}

struct EpochResult {
  uint64_t steps = 0, docs = 0, tokens = 0, longest = 0;
  uint64_t docs_seen = 0, tokens_seen = 0, twice = 0;
};

// Every rank's epoch 0 through its planner; counts what pieces of stream epoch 0 deliver.
EpochResult RunEpoch(const std::vector<std::string>& paths, const std::string& cache, uint32_t W,
                     PackMode pack, const std::string& text_field = StreamOptions{}.text_field) {
  StreamOptions so;
  so.inputs = paths;
  so.text_field = text_field;
  so.shuffle_buffer = 64;
  so.scan_cache_dir = cache;
  EpochResult out;
  std::map<std::pair<std::string, uint64_t>, std::vector<uint8_t>> seen;  // (file, offset)
  for (uint32_t r = 0; r < W; ++r) {
    LoaderOptions lo;
    lo.batch_size = kSkewBatch;
    lo.seq_len = kSeqLen;
    lo.world_size = W;
    lo.rank = r;
    lo.seed = 3;
    lo.pack = pack;
    lo.bestfit_window = 32;
    lo.num_workers = 1;
    auto p = StreamPlanner::Create(so, lo);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    if (!p.ok()) return out;
    if (cache != "off") {
      EXPECT_EQ((*p)->prescan_summary().files_from_cache, (*p)->prescan_summary().files);
    }
    const uint64_t steps = (*p)->steps_per_epoch(0);
    if (r == 0) {
      out.steps = steps;
      out.docs = (*p)->prescan_summary().documents;
      out.tokens = (*p)->prescan_summary().tokens;
    }
    EXPECT_EQ(steps, out.steps) << "rank " << r;
    const std::vector<StreamShard>& shards = (*p)->shards();
    for (uint64_t s = 0; s < steps; ++s) {
      auto rows = (*p)->RowsAt({0, s * kSkewBatch * W});
      EXPECT_TRUE(rows.ok()) << rows.status().ToString();
      if (!rows.ok()) return out;
      for (const PackedRow& row : *rows) {
        for (const PackedPiece& piece : row) {
          if (piece.stream_epoch != 0) continue;  // the next epoch's stream: seen again there
          std::vector<uint8_t>& t = seen[{shards[piece.ref.shard].path, piece.ref.offset}];
          t.resize(piece.tokens->size());
          out.longest = std::max<uint64_t>(out.longest, t.size());
          for (uint64_t i = piece.offset; i < piece.offset + piece.length; ++i) {
            out.twice += t[i] > 0;
            t[i] = 1;
          }
        }
      }
    }
  }
  for (const auto& [key, t] : seen) {
    ++out.docs_seen;
    for (uint8_t n : t) out.tokens_seen += n;
  }
  return out;
}

struct SkewCase {
  const char* name;
  std::vector<int> docs;  // documents per file
  bool zstd = false;
};

// 60%: one of 11 files. 1000 x 1 KB: 12 documents of ~80 bytes each. One huge file: a single
// .zst (a compressed file is never cut into byte ranges; the deal cuts it at documents). 91%: the
// user's 7 files, two with 91% of the bytes.
const SkewCase kCases[] = {
    {"OneShardWith60Percent", {750, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50}},
    {"AThousandShardsOf1KB", std::vector<int>(1000, 12)},
    {"OneHugeZstFile", {1250}, true},
    {"SevenShardsTwoWith91Percent", {700, 650, 30, 30, 30, 25, 25}},
};

class StreamSkew : public ::testing::TestWithParam<std::tuple<int, uint32_t, PackMode>> {};

TEST_P(StreamSkew, WhatTheEpochEndLeavesIsWithinTheBoundAndNothingComesTwice) {
  const auto [c, W, pack] = GetParam();
  const SkewCase& sc = kCases[c];
  TempDir dir;
  const std::vector<std::string> paths = WriteFiles(dir, sc.docs, sc.zstd);
  // The ranks' planners read the scans written once (a thousand files: their pre-scan reads the
  // data, cheaper than a thousand fsynced scan files).
  const std::string cache = paths.size() > 100 ? "off" : dir.File("scans");
  if (cache != "off") WriteScans(paths, cache);
  const EpochResult e = RunEpoch(paths, cache, W, pack);
  ASSERT_GT(e.steps, 0u);
  EXPECT_EQ(e.twice, 0u) << "tokens delivered twice in epoch 0";
  // The bound (docs/streaming.md): one global batch, plus per rank the packer's window (a row of
  // concat's or bestfit's last partial window; pad: a document) and the document across its cut.
  const uint64_t undelivered_docs = e.docs - e.docs_seen;
  const uint64_t undelivered = e.tokens - e.tokens_seen;
  std::printf(
      "%s W=%u pack=%d steps=%llu docs=%llu undelivered_docs=%llu tokens=%llu "
      "undelivered_tokens=%llu (%.2f%%) longest=%llu\n",
      sc.name, W, static_cast<int>(pack), static_cast<unsigned long long>(e.steps),
      static_cast<unsigned long long>(e.docs), static_cast<unsigned long long>(undelivered_docs),
      static_cast<unsigned long long>(e.tokens), static_cast<unsigned long long>(undelivered),
      100.0 * undelivered / e.tokens, static_cast<unsigned long long>(e.longest));
  if (pack == PackMode::kPad) {
    EXPECT_LE(undelivered_docs, W * kSkewBatch + 2 * W);
  } else {
    EXPECT_LE(undelivered, W * kSkewBatch * kSeqLen + W * (2 * kSeqLen + e.longest));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, StreamSkew,
    ::testing::Combine(::testing::Range(0, 4), ::testing::Values(1u, 3u, 8u, 64u),
                       ::testing::Values(PackMode::kConcat, PackMode::kBestFit)));
// pad (one row per document) on two of the cases: the deal then balances documents.
INSTANTIATE_TEST_SUITE_P(Pad, StreamSkew,
                         ::testing::Combine(::testing::Values(2, 3), ::testing::Values(3u, 64u),
                                            ::testing::Values(PackMode::kPad)));

// A tar member: ustar header (checksum over the header with its field as spaces), data, padding.
std::string TarMember(const std::string& name, const std::string& data) {
  char h[512] = {};
  std::memcpy(h, name.data(), name.size());
  std::snprintf(h + 100, 8, "%07o", 0644);
  std::snprintf(h + 108, 8, "%07o", 0);
  std::snprintf(h + 116, 8, "%07o", 0);
  std::snprintf(h + 124, 12, "%011o", static_cast<unsigned>(data.size()));
  std::snprintf(h + 136, 12, "%011o", 0);
  std::memset(h + 148, ' ', 8);
  h[156] = '0';
  std::memcpy(h + 257, "ustar", 6);
  std::memcpy(h + 263, "00", 2);
  unsigned sum = 0;
  for (char c : h) sum += static_cast<unsigned char>(c);
  std::snprintf(h + 148, 8, "%06o", sum);
  h[155] = ' ';
  std::string out(h, 512);
  out += data;
  out.append((512 - data.size() % 512) % 512, '\0');
  return out;
}

// A single WebDataset tar (a record shard: never cut into byte ranges) is cut by the deal at
// records; every 37th sample's text is empty (a record without a document, which the record
// index of a cut counts).
TEST(StreamSkew, ASingleTarIsCutAtRecordsWithinTheBound) {
  TempDir dir;
  std::mt19937 rng(37);
  std::string tar;
  for (int i = 0; i < 1500; ++i) {
    char key[16];
    std::snprintf(key, sizeof(key), "s%06d", i);
    std::string text = i % 37 == 36 ? "" : "sample " + std::to_string(i) + " ";
    const size_t len = text.empty() ? 0 : 20 + rng() % 121;
    while (text.size() < len) text += static_cast<char>('a' + rng() % 26);
    tar += TarMember(std::string(key) + ".txt", text);
  }
  tar.append(1024, '\0');
  const std::vector<std::string> paths = {dir.Write("one.tar", tar)};
  const std::string cache = dir.File("scans");
  WriteScans(paths, cache, "txt");
  for (uint32_t W : {3u, 8u}) {
    const EpochResult e = RunEpoch(paths, cache, W, PackMode::kConcat, "txt");
    ASSERT_GT(e.steps, 0u);
    EXPECT_EQ(e.twice, 0u);
    EXPECT_EQ(e.docs, 1500u - 1500u / 37);
    const uint64_t undelivered = e.tokens - e.tokens_seen;
    std::printf("tar W=%u steps=%llu undelivered_tokens=%llu of %llu\n", W,
                static_cast<unsigned long long>(e.steps),
                static_cast<unsigned long long>(undelivered),
                static_cast<unsigned long long>(e.tokens));
    EXPECT_LE(undelivered, W * kSkewBatch * kSeqLen + W * (2 * kSeqLen + e.longest));
  }
}

// The deal itself: contiguous pieces of the shuffled shard order, every document exactly once,
// rank weights within one document of each other; the units' record indices count the empty lines
// (records without a document) before a cut.
TEST(StreamDeal, CutsAtDocumentsEveryDocumentOnceWeightsWithinOneDocument) {
  std::vector<StreamShard> shards(5);
  ShardScan scan;
  std::mt19937 rng(9);
  for (uint32_t s = 0; s < shards.size(); ++s) {
    shards[s].end = 1;
    const int n = s == 2 ? 4000 : 30 + 10 * s;
    std::vector<uint32_t> len;
    std::vector<uint64_t> off, skipped;
    uint64_t at = 0;
    for (int i = 0; i < n; ++i) {
      if (i % 50 == 7) skipped.push_back(at++);  // an empty line
      len.push_back(1 + rng() % 100);
      off.push_back(at);
      at += 10;
    }
    scan.lengths.push_back(len);
    scan.offsets.push_back(off);
    scan.skipped.push_back(skipped);
  }
  for (uint32_t W : {1u, 3u, 8u, 64u}) {
    const auto dealt = DealEpoch(shards, &scan, 4, 2, W, PackMode::kConcat);
    ASSERT_EQ(dealt.size(), W);
    std::map<uint32_t, std::vector<int>> seen;
    uint64_t lo = UINT64_MAX, hi = 0, longest = 0;
    for (const auto& units : dealt) {
      uint64_t w = 0;
      for (const ReadUnit& u : units) {
        std::vector<uint32_t> l;
        AppendUnitLengths(scan, u, &l);
        for (uint32_t x : l) w += x;
        std::vector<int>& s = seen[u.shard];
        s.resize(scan.lengths[u.shard].size());
        const uint64_t end = std::min<uint64_t>(u.end_docs, s.size());
        for (uint64_t i = u.docs; i < end; ++i) ++s[i];
        if (u.docs > 0) {  // the record index: documents and empty lines before the offset
          const auto& sk = scan.skipped[u.shard];
          EXPECT_EQ(u.offset, scan.offsets[u.shard][u.docs]);
          EXPECT_EQ(u.record,
                    u.docs + (std::lower_bound(sk.begin(), sk.end(), u.offset) - sk.begin()));
        }
        if (u.end_docs != ReadUnit::kNoEnd) {
          const auto& sk = scan.skipped[u.shard];
          const uint64_t off = scan.offsets[u.shard][u.end_docs];
          EXPECT_EQ(u.end_record,
                    u.end_docs + (std::lower_bound(sk.begin(), sk.end(), off) - sk.begin()));
        }
      }
      lo = std::min(lo, w);
      hi = std::max(hi, w);
    }
    for (const auto& l : scan.lengths) {
      for (uint32_t x : l) longest = std::max<uint64_t>(longest, x);
    }
    for (uint32_t s = 0; s < shards.size(); ++s) {
      ASSERT_EQ(seen[s].size(), scan.lengths[s].size());
      for (int n : seen[s]) ASSERT_EQ(n, 1) << "W=" << W << " shard " << s;
    }
    EXPECT_LE(hi - lo, 2 * longest) << "W=" << W;
    EXPECT_EQ(dealt, DealEpoch(shards, &scan, 4, 2, W, PackMode::kConcat));
    if (W > 1) {
      EXPECT_NE(dealt, DealEpoch(shards, &scan, 4, 3, W, PackMode::kConcat));
    }
  }
}

}  // namespace
}  // namespace stoker::stream
