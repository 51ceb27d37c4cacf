#include "diag/bench_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "common/temp_dir.h"
#include "diag/bench_report.h"
#include "diag/report_html.h"
#include "loader/memory_token_source.h"

namespace stoker::diag {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<const TokenSource> Documents(int n, int length) {
  std::vector<std::vector<int64_t>> docs(n);
  for (int d = 0; d < n; ++d) {
    for (int i = 0; i < length + d % 7; ++i) docs[d].push_back((d * 131 + i) % 50000);
  }
  return std::make_shared<loader::MemoryTokenSource>("memory", std::move(docs));
}

BenchConfig SmallConfig() {
  BenchConfig c;
  c.datasets.push_back({"memory", Documents(500, 300), 1.0});
  c.options.seq_len = 256;
  c.options.batch_size = 4;
  c.options.num_workers = 2;
  c.batches = 40;
  c.warmup_batches = 3;
  c.sample_interval_s = 0.001;
  return c;
}

// A v1 .npy file: 2-D uint16 [rows, cols].
void WriteNpy(const std::string& path, int rows, int cols) {
  std::string header = "{'descr': '<u2', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string data = std::string("\x93NUMPY\x01\x00", 8);
  data += static_cast<char>(header.size() & 0xff);
  data += static_cast<char>(header.size() >> 8);
  data += header;
  for (int i = 0; i < rows * cols; ++i) {
    const uint16_t v = static_cast<uint16_t>(i % 1000);
    data.append(reinterpret_cast<const char*>(&v), 2);
  }
  ASSERT_TRUE(WriteFileAtomically(path, data).ok());
}

TEST(BenchRunnerTest, MeasuresWhatTheLoaderDelivered) {
  BenchConfig c = SmallConfig();
  std::vector<BenchProgress> progress;
  c.on_progress = [&](const BenchProgress& p) { progress.push_back(p); };
  Result<BenchResult> r = RunBench(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->warmup_batches, 3u);
  EXPECT_EQ(r->batches, 40u);
  EXPECT_EQ(r->tokens, 40u * 4 * 256);
  EXPECT_EQ(r->samples, 160u);
  EXPECT_GT(r->real_tokens, 0u);
  EXPECT_LE(r->real_tokens, r->tokens);
  EXPECT_NEAR(r->tokens_per_s, r->tokens / r->wall_s, 1e-6 * r->tokens_per_s);
  // MB/s counts the real tokens at the source's 8 bytes per token.
  EXPECT_NEAR(r->mb_per_s, r->real_tokens * 8 / 1e6 / r->wall_s, 1e-9 * r->mb_per_s + 1e-12);
  EXPECT_GT(r->time_to_first_batch_s, 0);
  EXPECT_GT(r->peak_rss_bytes, 1u << 20);
  EXPECT_GE(r->cpu_s, 0);
  EXPECT_GT(r->read_s, 0);
  EXPECT_GT(r->assemble_s, 0);
  EXPECT_LT(r->tokenize_s, 0);  // pretokenized: not applicable
  EXPECT_EQ(r->workers, 2);
  EXPECT_EQ(r->shards, 1u);
  EXPECT_FALSE(r->timeline.empty());
  ASSERT_FALSE(progress.empty());
  EXPECT_TRUE(progress.front().warming_up);
  EXPECT_EQ(progress.back().batches, 40u);
}

TEST(BenchRunnerTest, CrossesEpochBoundaries) {
  BenchConfig c = SmallConfig();
  c.datasets[0].source = Documents(20, 300);  // ~6,000 tokens: under 2 batches per epoch
  c.batches = 30;
  Result<BenchResult> r = RunBench(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->batches, 30u);
}

TEST(BenchRunnerTest, SyntheticServesWithoutReads) {
  BenchConfig c = SmallConfig();
  c.synthetic = true;
  c.datasets.clear();
  Result<BenchResult> r = RunBench(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->batches, 40u);
  EXPECT_EQ(r->read_s, 0);
  EXPECT_EQ(r->mb_per_s, 0);
}

TEST(BenchRunnerTest, ConsumerStepFeedsTheMonitor) {
  BenchConfig c = SmallConfig();
  // 50 ms, not less: the monitor's first verdict (after 8 batches) includes the first batch's
  // wait, the loader's start-up. Under load a 2 ms step was outrun by the loader's scheduling
  // delays, and under ASan with another test on the second core a 10 ms step by 5 ms of waiting
  // in 90 ms (5.6%); the monitor then (rightly) warned. At 50 ms it takes 21 ms of waiting.
  c.consumer_step_ms = 50;
  c.batches = 20;
  std::vector<std::string> warnings;
  c.monitor_sink = [&](const std::string& w) { warnings.push_back(w); };
  Result<BenchResult> r = RunBench(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GE(r->consumer_step_s, 20 * 0.050);
  // A 50 ms step on 1,024-token batches is far slower than this loader: no stall, no warning.
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  EXPECT_EQ(r->monitor_warnings, 0u);
  EXPECT_LT(r->stall_share, 0.5);
  EXPECT_EQ(r->consumer_step_ms, 50);
}

TEST(BenchRunnerTest, BadConfigs) {
  BenchConfig c = SmallConfig();
  c.batches = 0;
  EXPECT_EQ(RunBench(c).status().code(), StatusCode::kInvalidArgument);
  c = SmallConfig();
  c.batches.reset();
  c.seconds = -1;
  EXPECT_THAT(RunBench(c).status().message(), HasSubstr("--seconds"));
  c = SmallConfig();
  c.datasets.clear();
  EXPECT_FALSE(RunBench(c).ok());
}

TEST(BenchRunnerTest, OpenDatasetsParsesWeightsAndNamesMissingFiles) {
  auto dir = TempDir::Create("diag-");
  ASSERT_TRUE(dir.ok());
  const std::string npy = (*dir)->Join("tokens.npy");
  WriteNpy(npy, 64, 128);
  Result<std::vector<LoaderDataset>> ds = OpenDatasets({"2.5:" + npy, npy});
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_DOUBLE_EQ((*ds)[0].weight, 2.5);
  EXPECT_EQ((*ds)[0].path, npy);
  EXPECT_EQ((*ds)[1].weight, 1.0);
  EXPECT_EQ((*ds)[0].source->num_tokens(), 64u * 128);
  Result<std::vector<LoaderDataset>> missing = OpenDatasets({(*dir)->Join("nope.npy")});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("nope.npy"));
  EXPECT_THAT(OpenDatasets({"0:" + npy}).status().message(), HasSubstr("must be > 0"));

  BenchConfig c = SmallConfig();
  c.datasets = *ds;
  c.options.seq_len = 128;
  Result<BenchResult> r = RunBench(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(r->mb_per_s, r->real_tokens * 2 / 1e6 / r->wall_s, 1e-9 * r->mb_per_s);
}

TEST(BenchReportTest, JsonHoldsEveryTableFigure) {
  Result<BenchResult> r = RunBench(SmallConfig());
  ASSERT_TRUE(r.ok());
  nlohmann::json j = BenchJson(*r, SmallConfig().options, false, 0);
  const std::string table = RenderBenchTable(*r);
  for (const Figure& f : BenchFigures(*r)) {
    ASSERT_TRUE(j.contains(f.key)) << f.key;
    EXPECT_EQ(j[f.key].is_null(), !f.applicable) << f.key;
    EXPECT_THAT(table, HasSubstr(f.label.rfind("stage ", 0) == 0 ? f.label.substr(6) : f.label));
  }
  EXPECT_DOUBLE_EQ(j["tokens_per_s"].get<double>(), r->tokens_per_s);
  EXPECT_TRUE(j["warmup_excluded"].get<bool>());
  EXPECT_EQ(j["setting"]["seq_len"].get<uint64_t>(), 256u);
}

TEST(BenchReportTest, HtmlIsSelfContainedWithEveryPlot) {
  Result<BenchResult> r = RunBench(SmallConfig());
  ASSERT_TRUE(r.ok());
  const std::string html = RenderReportHtml(*r, "a <b> & c");
  EXPECT_THAT(html, HasSubstr("id=\"plot-throughput\""));
  EXPECT_THAT(html, HasSubstr("id=\"plot-stall\""));
  EXPECT_THAT(html, HasSubstr("id=\"plot-stages\""));
  EXPECT_THAT(html, HasSubstr("a &lt;b&gt; &amp; c"));
  // Nothing to fetch: no script, no external resource (the SVG xmlns is a name, not a fetch).
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
}

}  // namespace
}  // namespace stoker::diag
