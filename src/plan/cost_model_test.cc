#include "plan/cost_model.h"

#include <gtest/gtest.h>

#include <string>

#include "common/file_util.h"

namespace stoker::plan {
namespace {

std::string ReadModelConfig(const std::string& model) {
  const std::string path =
      std::string(STOKER_SOURCE_DIR) + "/tests/data/model_configs/" + model + "/config.json";
  auto text = ReadFileToString(path);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : "";
}

// Llama-3.1-8B by hand. Per token and layer, forward: Q and O 2·4096·(32·128) each, K and V
// 2·4096·(8·128) each (= 83,886,080), gate/up/down 3·2·4096·14,336 (= 352,321,536); the LM head
// 2·4096·128,256 (= 1,050,673,152). 32 layers: 15,009,316,864 = 2 × the 7,504,658,432 weights of
// the published 8,030,261,248 parameters that are matrices (less the 525,336,576 embedding and
// the 266,240 norm weights). Attention: 4·128·32 per token pair per layer, L(L+1)/2 pairs:
// 2·32·128·32 = 262,144 per L² and per L. Training = 3 × forward.
TEST(CostModelTest, Llama31_8BByHand) {
  auto shape = ParseModelConfig(ReadModelConfig("llama-3.1-8b"), "llama-3.1-8b/config.json");
  ASSERT_TRUE(shape.ok()) << shape.status().ToString();
  EXPECT_EQ(shape->hidden_size, 4096u);
  EXPECT_EQ(shape->head_dim, 128u);  // no head_dim key: 4096 / 32
  EXPECT_EQ(shape->kv_heads, 8u);
  EXPECT_TRUE(shape->gated_mlp);
  EXPECT_FALSE(shape->tied_embeddings);
  CostModel m = CostModelFromShape(*shape);
  EXPECT_EQ(m.a, 3.0 * (15'009'316'864.0 + 262'144.0));
  EXPECT_EQ(m.b, 3.0 * 262'144.0);
  EXPECT_EQ(m.c, 0.0);
  // One 8,192-token document: 3 × (15,009,316,864·8192 + 262,144·8192·8193) FLOPs.
  EXPECT_DOUBLE_EQ(m.Cost(8192), 3.0 * (15'009'316'864.0 * 8192 + 262'144.0 * 8192 * 8193));
}

// Qwen2.5-0.5B by hand: Q and O 2·896·(14·64) each, K and V 2·896·(2·64) each, gate/up/down
// 3·2·896·4,864; the tied LM head still multiplies: 2·896·151,936. 24 layers: 987,922,432 =
// 2 × (the published 494,032,768 parameters less the 136,134,656 embedding, 24 layers' Q/K/V
// biases (1,152 each) and norms (1,792 each) and the final norm (896), plus the 136,134,656 of
// the tied head). Attention: 2·14·64·24 = 43,008 per L² and per L.
TEST(CostModelTest, Qwen25_05BByHand) {
  auto shape = ParseModelConfig(ReadModelConfig("qwen2.5-0.5b"), "qwen2.5-0.5b/config.json");
  ASSERT_TRUE(shape.ok()) << shape.status().ToString();
  EXPECT_EQ(shape->head_dim, 64u);
  EXPECT_EQ(shape->kv_heads, 2u);
  EXPECT_TRUE(shape->tied_embeddings);
  auto m = CostModelFromConfig(ReadModelConfig("qwen2.5-0.5b"), "qwen");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->a, 3.0 * (987'922'432.0 + 43'008.0));
  EXPECT_EQ(m->b, 3.0 * 43'008.0);
}

TEST(CostModelTest, UngatedMlpAndExplicitHeadDim) {
  // GPT-2 small: n_inner null means 4·768; two MLP matrices.
  auto m = CostModelFromConfig(
      R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "n_inner": null,
          "vocab_size": 50257})",
      "gpt2");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const double fwd_linear = 12 * (4.0 * 768 * 64 * 24 + 2 * 2 * 768 * 3072.0) + 2.0 * 768 * 50257;
  EXPECT_EQ(m->a, 3 * (fwd_linear + 2.0 * 12 * 64 * 12));
  // Gemma-style head_dim wider than hidden_size / heads.
  auto shape = ParseModelConfig(
      R"({"model_type": "gemma", "hidden_size": 2048, "intermediate_size": 16384,
          "num_hidden_layers": 18, "num_attention_heads": 8, "num_key_value_heads": 1,
          "head_dim": 256, "vocab_size": 256000})",
      "gemma");
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ(shape->head_dim, 256u);
  EXPECT_EQ(CostModelFromShape(*shape).b, 3.0 * 2 * 8 * 256 * 18);
}

TEST(CostModelTest, RefusesWhatItCannotCount) {
  auto err = [](const std::string& json) {
    auto r = ParseModelConfig(json, "m/config.json");
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_NE(err("[1, 2]").find("m/config.json: not a JSON object"), std::string::npos);
  EXPECT_NE(err("{not json").find("not a JSON object"), std::string::npos);
  EXPECT_NE(err(R"({"model_type": "mixtral", "num_local_experts": 8})").find("mixture of experts"),
            std::string::npos);
  EXPECT_NE(err(R"({"model_type": "mamba", "hidden_size": 768})").find("model_type 'mamba'"),
            std::string::npos);
  EXPECT_NE(err(R"({"model_type": "llama", "hidden_size": 64})").find("no 'num_hidden_layers'"),
            std::string::npos);
  EXPECT_NE(err(R"({"model_type": "llama", "hidden_size": -4})").find("positive integer"),
            std::string::npos);
  EXPECT_NE(err(R"({"model_type": "llava", "text_config": {}})").find("text_config"),
            std::string::npos);
  EXPECT_NE(err(R"({"model_type": "llama", "hidden_size": 100, "num_hidden_layers": 2,
                   "num_attention_heads": 3, "vocab_size": 10, "intermediate_size": 8})")
                .find("not a multiple of 3 heads"),
            std::string::npos);
}

TEST(CostModelTest, ValidatesCoefficients) {
  EXPECT_TRUE(ValidateCostModel({1, 0, 0}).ok());
  EXPECT_TRUE(ValidateCostModel({0, 1e-3, 5}).ok());
  EXPECT_FALSE(ValidateCostModel({0, 0, 0}).ok());
  EXPECT_NE(ValidateCostModel({1, -1, 0}).message().find("'b' must be"), std::string::npos);
  EXPECT_FALSE(ValidateCostModel({1, 0, std::numeric_limits<double>::infinity()}).ok());
}

TEST(CostModelTest, FitRecoversCoefficients) {
  const CostModel truth{2e-6, 3e-10, 1e-4};
  std::vector<CostSample> samples;
  for (uint64_t long_len : {512u, 2048u, 8192u}) {
    for (uint64_t docs : {1u, 4u, 16u}) {
      CostSample s;
      for (uint64_t i = 0; i < docs; ++i) s.lengths.push_back(long_len / docs + i);
      for (uint64_t l : s.lengths) s.seconds += truth.Cost(l);
      samples.push_back(s);
    }
  }
  double r2 = 0;
  auto fit = FitCostModel(samples, &r2);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  EXPECT_NEAR(fit->a, truth.a, truth.a * 1e-6);
  EXPECT_NEAR(fit->b, truth.b, truth.b * 1e-6);
  EXPECT_NEAR(fit->c, truth.c, truth.c * 1e-6);
  EXPECT_NEAR(r2, 1.0, 1e-9);
}

TEST(CostModelTest, FitKeepsCoefficientsNonNegative) {
  // Times that fall with the documents count would need c < 0: c is held at 0.
  std::vector<CostSample> samples = {
      {{1000}, 1.0}, {{500, 500}, 0.9}, {{250, 250, 250, 250}, 0.8}, {{2000}, 2.2}};
  auto fit = FitCostModel(samples);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  EXPECT_GE(fit->a, 0);
  EXPECT_GE(fit->b, 0);
  EXPECT_EQ(fit->c, 0);
}

TEST(CostModelTest, FitNeedsDistinctSamples) {
  EXPECT_NE(FitCostModel({{{10}, 1}, {{10}, 1}}).status().message().find("at least 3"),
            std::string::npos);
  EXPECT_NE(FitCostModel({{{}, 0}, {{}, 0}, {{}, 0}}).status().message().find("collinear"),
            std::string::npos);
  EXPECT_FALSE(FitCostModel({{{10}, -1}, {{20}, 1}, {{30}, 1}}).ok());
}

}  // namespace
}  // namespace stoker::plan
