#include "diag/doctor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace stoker::diag {
namespace {

using ::testing::HasSubstr;

bool AnyContains(const std::vector<std::string>& lines, const std::string& s) {
  for (const std::string& l : lines) {
    if (l.find(s) != std::string::npos) return true;
  }
  return false;
}

TEST(DoctorTest, ParamCounts) {
  EXPECT_DOUBLE_EQ(*ParseParamCount("1.3B"), 1.3e9);
  EXPECT_DOUBLE_EQ(*ParseParamCount("350m"), 350e6);
  EXPECT_DOUBLE_EQ(*ParseParamCount("7e9"), 7e9);
  EXPECT_DOUBLE_EQ(*ParseParamCount("70b"), 70e9);
  EXPECT_DOUBLE_EQ(*ParseParamCount("125000000"), 125e6);
  for (const char* bad : {"", "B", "-1B", "0", "abc", "1.3X", "nan"}) {
    EXPECT_FALSE(ParseParamCount(bad).ok()) << bad;
  }
}

TEST(DoctorTest, KnownGpuTypes) {
  EXPECT_DOUBLE_EQ(FindGpu("H100")->peak_dense_bf16_flops, 989e12);
  EXPECT_DOUBLE_EQ(FindGpu("a100")->peak_dense_bf16_flops, 312e12);
  Result<GpuSpec> bad = FindGpu("gtx480");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("unknown GPU type 'gtx480'"));
  EXPECT_THAT(bad.status().message(), HasSubstr("h200"));
}

TEST(DoctorTest, ModelRuleKnownNumbers) {
  // 1.3B params on 8 H100 at 40% MFU: 8 * 0.4 * 989e12 / (6 * 1.3e9) = 405,743.6 tokens/s.
  TrainingRate r;
  r.kind = TrainingRate::Kind::kModel;
  r.model_params = 1.3e9;
  r.gpus = 8;
  r.gpu = "h100";
  r.mfu = 0.4;
  Result<Consumption> c = ComputeConsumption(r, 2048);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_NEAR(c->tokens_per_s, 405743.59, 0.01);
  EXPECT_NEAR(c->samples_per_s, 405743.59 / 2048, 1e-3);
  EXPECT_DOUBLE_EQ(c->flops_per_token, 7.8e9);
  EXPECT_THAT(c->explanation, HasSubstr("6 x N"));
  EXPECT_THAT(c->explanation, HasSubstr("989 TFLOP/s"));
  // 7B on one A100 at 50%: 0.5 * 312e12 / 42e9 = 3714.29 tokens/s.
  r.model_params = 7e9;
  r.gpus = 1;
  r.gpu = "a100";
  r.mfu = 0.5;
  EXPECT_NEAR(ComputeConsumption(r, 4096)->tokens_per_s, 3714.2857, 1e-3);
}

TEST(DoctorTest, GivenRates) {
  TrainingRate r;
  r.kind = TrainingRate::Kind::kSamplesPerS;
  r.value = 100;
  EXPECT_DOUBLE_EQ(ComputeConsumption(r, 2048)->tokens_per_s, 204800);
  r.kind = TrainingRate::Kind::kTokensPerS;
  r.value = 1e6;
  EXPECT_DOUBLE_EQ(ComputeConsumption(r, 1000)->samples_per_s, 1000);
}

TEST(DoctorTest, BadRatesAreInvalidArguments) {
  TrainingRate r;
  r.value = -5;
  EXPECT_EQ(ComputeConsumption(r, 2048).status().code(), StatusCode::kInvalidArgument);
  r.kind = TrainingRate::Kind::kModel;
  r.model_params = 1e9;
  r.gpus = 0;
  EXPECT_FALSE(ComputeConsumption(r, 2048).ok());
  r.gpus = 1;
  r.mfu = 1.5;
  EXPECT_FALSE(ComputeConsumption(r, 2048).ok());
  r.mfu = 0.4;
  r.gpu = "tpu";
  EXPECT_THAT(ComputeConsumption(r, 2048).status().message(), HasSubstr("unknown GPU type"));
}

Measurement ReadBound() {
  Measurement m;
  m.tokens_per_s = 1e6;
  m.wall_s = 10;
  m.cpu_s = 3;
  m.read_s = 15;
  m.assemble_s = 2;
  m.workers = 2;
  m.cores = 8;
  m.global_shuffle = true;
  m.shards = 100;
  m.dataset_bytes = 100 * (10ull << 20);
  return m;
}

TEST(DoctorTest, VerdictBothSidesOfTheRule) {
  Measurement m = ReadBound();
  Consumption c;
  c.tokens_per_s = 1e6 / 1.19;  // delivered 1.19x: fail
  Verdict fail = Diagnose(m, c);
  EXPECT_NEAR(fail.ratio, 1.19, 1e-9);
  EXPECT_FALSE(fail.pass);
  c.tokens_per_s = 1e6 / 1.21;
  Verdict pass = Diagnose(m, c);
  EXPECT_TRUE(pass.pass);
  EXPECT_NEAR(pass.ratio, 1.21, 1e-9);
  c.tokens_per_s = 1e6 / 1.2;  // exactly at the rule passes
  EXPECT_TRUE(Diagnose(m, c).pass);
  ASSERT_EQ(pass.advice.size(), 1u);
  EXPECT_THAT(pass.advice[0], HasSubstr("will not wait"));
}

TEST(DoctorTest, ReadBoundAdviceFollowsTheMeasurements) {
  Measurement m = ReadBound();
  Consumption c;
  c.tokens_per_s = 2e6;
  Verdict v = Diagnose(m, c);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.slowest_stage, "read");
  EXPECT_NEAR(v.slowest_stage_share, 15.0 / 17, 1e-9);
  EXPECT_THAT(v.advice[0], HasSubstr("2.40x faster"));
  EXPECT_TRUE(AnyContains(v.advice, "--workers 8 (now 2 of 8")) << v.advice[1];
  EXPECT_TRUE(AnyContains(v.advice, "which would be enough"));
  EXPECT_TRUE(AnyContains(v.advice, "wait on storage"));
  EXPECT_TRUE(AnyContains(v.advice, "--shuffle block"));
  EXPECT_TRUE(AnyContains(v.advice, "Shards average 10.5 MB"));
  EXPECT_FALSE(AnyContains(v.advice, "All 8 cores are busy"));
}

// Global shuffle over a remote dataset larger than the cache: each worker waits on one ranged GET
// at a time. The doctor names request latency and the cache budget that would fetch whole shards,
// not "copy the data to a local NVMe cache" (the cache is there).
TEST(DoctorTest, RequestLatencyBoundAdviceNamesTheCacheBudget) {
  Measurement m = ReadBound();
  m.remote = true;
  m.batches = 100;
  m.requests_per_batch = 40;
  m.mean_request_ms = 4.5;
  m.storage_wait_s = 18;  // of 2 workers x 10 s
  m.ranged_reads = true;
  m.ranged_bytes = 5'000'000'000;
  m.cache_budget_bytes = 1'000'000'000;
  Consumption c;
  c.tokens_per_s = 2e6;
  Verdict v = Diagnose(m, c);
  EXPECT_TRUE(v.latency_bound);
  EXPECT_TRUE(AnyContains(v.advice,
                          "Request latency limits delivery: 40.0 requests per batch at "
                          "4.5 ms each"));
  EXPECT_TRUE(AnyContains(v.advice, "90 ms of every 100 ms batch"));
  EXPECT_TRUE(AnyContains(v.advice,
                          "its 5 GB exceed the cache budget of 1 GB: with "
                          "--cache-size 5 GB or more"));
  EXPECT_TRUE(AnyContains(v.advice, "--shuffle block"));
  EXPECT_FALSE(AnyContains(v.advice, "local NVMe cache"));
  m.cache_budget_bytes = 0;  // --no-cache
  v = Diagnose(m, c);
  EXPECT_TRUE(AnyContains(v.advice, "it has no cache (--no-cache)"));
  // The same reads with the workers mostly elsewhere: not latency-bound.
  m.storage_wait_s = 4;
  v = Diagnose(m, c);
  EXPECT_FALSE(v.latency_bound);
  EXPECT_FALSE(AnyContains(v.advice, "Request latency"));
}

// With the loader's read-ahead, the request slots are its requests in flight and the workers':
// latency bounds delivery when those slots are busy, not when the workers alone would be.
TEST(DoctorTest, RequestLatencyCountsTheReadAheadsRequestsInFlight) {
  Measurement m = ReadBound();
  m.remote = true;
  m.batches = 100;
  m.requests_per_batch = 340;
  m.mean_request_ms = 5;
  m.ranged_reads = true;
  m.read_ahead_requests = 32;
  m.ranged_bytes = 5'000'000'000;
  m.cache_budget_bytes = 1'000'000'000;
  m.storage_wait_s = 18;  // of 34 slots x 10 s: 5% busy, not latency-bound
  Consumption c;
  c.tokens_per_s = 2e6;
  EXPECT_FALSE(Diagnose(m, c).latency_bound);
  m.storage_wait_s = 170;  // half of 34 slots x 10 s
  Verdict v = Diagnose(m, c);
  EXPECT_TRUE(v.latency_bound);
  EXPECT_TRUE(AnyContains(v.advice,
                          "340.0 requests per batch at 5.0 ms each, 34 at a time "
                          "(32 read ahead, 2 workers), is 50 ms of every 100 ms batch"));
}

// Whole shards through the cache (a cold first epoch): the advice is about the cache filling, not
// about copying data to a cache or --shuffle block.
TEST(DoctorTest, WholeShardCacheAdviceDoesNotAskForACache) {
  Measurement m = ReadBound();
  m.remote = true;
  m.whole_shards_cached = true;
  m.storage_wait_s = 30;  // eight download threads
  Consumption c;
  c.tokens_per_s = 2e6;
  Verdict v = Diagnose(m, c);
  EXPECT_FALSE(v.latency_bound);
  EXPECT_TRUE(AnyContains(v.advice, "fetching whole shards"));
  EXPECT_FALSE(AnyContains(v.advice, "local NVMe cache"));
  EXPECT_FALSE(AnyContains(v.advice, "--shuffle block"));
}

TEST(DoctorTest, CpuBoundAssemblyAdvice) {
  Measurement m;
  m.tokens_per_s = 1e6;
  m.wall_s = 10;
  m.cpu_s = 39;  // 3.9 of 4 cores
  m.read_s = 5;
  m.assemble_s = 30;
  m.workers = 4;
  m.cores = 4;
  m.attention_mask = true;
  Consumption c;
  c.tokens_per_s = 1e6;
  Verdict v = Diagnose(m, c);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.slowest_stage, "assemble");
  EXPECT_TRUE(AnyContains(v.advice, "All 4 cores are busy"));
  EXPECT_TRUE(AnyContains(v.advice, "dense [B, S, S] attention mask"));
  EXPECT_FALSE(AnyContains(v.advice, "More workers"));
  EXPECT_FALSE(AnyContains(v.advice, "wait on storage"));
}

TEST(DoctorTest, CpuBoundReadsAreNotBlamedOnStorage) {
  Measurement m = ReadBound();
  m.cpu_s = 19;  // the 2 workers kept 1.9 cores busy: reading from the page cache is compute
  Consumption c;
  c.tokens_per_s = 2e6;
  Verdict v = Diagnose(m, c);
  EXPECT_EQ(v.slowest_stage, "read");
  EXPECT_FALSE(AnyContains(v.advice, "wait on storage"));
  EXPECT_FALSE(AnyContains(v.advice, "--shuffle block"));
  EXPECT_TRUE(AnyContains(v.advice, "--workers 8"));
}

TEST(DoctorTest, TokenizeAndCopyStages) {
  Measurement m;
  m.tokens_per_s = 1;
  m.tokenize_s = 9;
  m.read_s = 1;
  Consumption c;
  c.tokens_per_s = 10;
  Verdict v = Diagnose(m, c);
  EXPECT_EQ(v.slowest_stage, "tokenize");
  EXPECT_TRUE(AnyContains(v.advice, "pretokenize"));
  m.tokenize_s = -1;
  m.copy_s = 5;
  v = Diagnose(m, c);
  EXPECT_EQ(v.slowest_stage, "host->device copy");
  EXPECT_TRUE(AnyContains(v.advice, "pin_memory"));
}

}  // namespace
}  // namespace stoker::diag
