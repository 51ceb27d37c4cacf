// Mixture files: parsing, resolving `until`, and one clear error per bad input.
#include "plan/mixture_file.h"

#include <gtest/gtest.h>

#include <string>

namespace stoker::plan {
namespace {

constexpr char kFile[] = R"({
  "datasets": {"web": "s3://corpus/web", "code": "data/code", "math": "/abs/math"},
  "phases": [{"until": "90%", "weights": {"web": 0.8, "code": 0.15, "math": 0.05}},
             {"weights": {"web": 0.5, "code": [0.2, 0.1], "math": 0.3}}]})";

TEST(MixtureFileTest, ParsesNamesPathsPhasesAndRamps) {
  auto m = ParseMixtureFile(kFile, "runs/mix.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->names, (std::vector<std::string>{"web", "code", "math"}));
  // Relative paths are relative to the file; URIs and absolute paths are kept.
  EXPECT_EQ(m->paths, (std::vector<std::string>{"s3://corpus/web", "runs/data/code", "/abs/math"}));
  ASSERT_EQ(m->phases.size(), 2u);
  EXPECT_EQ(m->phases[0].until->unit, PhaseEnd::Unit::kShare);
  EXPECT_DOUBLE_EQ(m->phases[0].until->value, 0.9);
  EXPECT_EQ(m->phases[0].weights, (std::vector<double>{0.8, 0.15, 0.05}));
  EXPECT_TRUE(m->phases[0].end_weights.empty());
  EXPECT_EQ(m->phases[1].end_weights, (std::vector<double>{0.5, 0.1, 0.3}));
}

TEST(MixtureFileTest, ResolvesSharesStepsAndTokensToGlobalRows) {
  auto m = ParseMixtureFile(R"({"datasets": {"a": "a", "b": "b"}, "phases": [
      {"until": "10%", "weights": {"a": 1, "b": 0}},
      {"until": "300 steps", "weights": {"a": 1, "b": 1}},
      {"until": "20M tokens", "weights": {"a": 0, "b": 1}},
      {"weights": {"a": 1, "b": 1}}]})",
                            "m.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  RunLength run;
  run.total_tokens = 4096 * 10000;  // 10,000 rows of 4096
  auto phases = ResolvePhases(*m, 4096, 16, run);
  ASSERT_TRUE(phases.ok()) << phases.status().ToString();
  ASSERT_EQ(phases->size(), 4u);
  EXPECT_EQ((*phases)[0].end_row, 1000u);
  EXPECT_EQ((*phases)[1].end_row, 300u * 16);
  EXPECT_EQ((*phases)[2].end_row, (20000000u + 4095) / 4096);
  EXPECT_EQ((*phases)[3].end_row, UINT64_MAX);
  // A share needs the run's length.
  auto no_length = ResolvePhases(*m, 4096, 16, RunLength{});
  ASSERT_FALSE(no_length.ok());
  EXPECT_NE(no_length.status().message().find("m.json: phases[0]: 'until' is a share of the run"),
            std::string::npos)
      << no_length.status().ToString();
  // Ends that do not increase once resolved (1,000 rows vs 300 steps of 2 rows).
  auto out_of_order = ResolvePhases(*m, 4096, 2, run);
  ASSERT_FALSE(out_of_order.ok());
  EXPECT_NE(out_of_order.status().message().find("phases[1]: 'until' ends at global row 600, not "
                                                 "after the previous phase's end (row 1000)"),
            std::string::npos)
      << out_of_order.status().ToString();
}

TEST(MixtureFileTest, ARampInTheLastPhaseRunsToTheRunsEnd) {
  auto m = ParseMixtureFile(
      R"({"datasets": {"a": "a", "b": "b"}, "phases": [{"weights": {"a": [1, 0], "b": [0, 1]}}]})",
      "m.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  RunLength run;
  run.total_steps = 100;
  auto phases = ResolvePhases(*m, 128, 8, run);
  ASSERT_TRUE(phases.ok()) << phases.status().ToString();
  ASSERT_EQ(phases->size(), 2u);
  EXPECT_EQ((*phases)[0].end_row, 800u);
  EXPECT_EQ((*phases)[0].end_weights, (std::vector<double>{0, 1}));
  EXPECT_EQ((*phases)[1].weights, (std::vector<double>{0, 1}));
  EXPECT_FALSE(ResolvePhases(*m, 128, 8, RunLength{}).ok());
}

TEST(MixtureFileTest, OneMixtureForTheWholeRunHasNoPhases) {
  auto m = ParseMixtureFile(R"({"datasets": {"a": "a", "b": "b"}, "weights": {"a": 3, "b": 1}})",
                            "m.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->phases.size(), 1u);
  EXPECT_EQ(m->phases[0].weights, (std::vector<double>{3, 1}));
  auto phases = ResolvePhases(*m, 128, 8, RunLength{});
  ASSERT_TRUE(phases.ok());
  EXPECT_TRUE(phases->empty());
}

TEST(MixtureFileTest, EachBadInputIsOneErrorNamingTheFileAndTheKey) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"datasets": {"a": "a"}, "weights": {"a": 1}, "seed": 3})", "m.json: unknown key 'seed'"},
      {R"({"datasets": {"a": "a"}, "phases": [{"weights": {"a": 1}, "when": "1%"}]})",
       "m.json: phases[0]: unknown key 'when'"},
      {R"({"datasets": {"a": "x", "a": "y"}, "weights": {"a": 1}})", "m.json: key 'a' given twice"},
      {R"({"datasets": {"a": "x", "b": "x"}, "weights": {"a": 1, "b": 1}})",
       "'b' and 'a' name the same dataset"},
      {R"({"datasets": {"a": "a", "b": "b"}, "weights": {"a": 0, "b": 0}})",
       "m.json: weights: they must sum to a positive number"},
      {R"({"datasets": {"a": "a", "b": "b"}, "weights": {"a": -1, "b": 2}})",
       "weights: 'a': a weight must be a number >= 0"},
      {R"({"datasets": {"a": "a", "b": "b"}, "weights": {"a": 1}})",
       "weights: no weight for 'b' (write 0 to leave it out of this phase)"},
      {R"({"datasets": {"a": "a"}, "weights": {"a": 1, "c": 1}})",
       "weights: 'c' is not in 'datasets'"},
      {R"({"datasets": {"a": "a"}, "phases": [{"until": "50%", "weights": {"a": 1}},
          {"until": "40%", "weights": {"a": 1}}, {"weights": {"a": 1}}]})",
       "m.json: phases[1]: 'until' is not after the previous phases' ends"},
      {R"({"datasets": {"a": "a"}, "phases": [{"weights": {"a": 1}}, {"weights": {"a": 1}}]})",
       "m.json: phases[0]: 'until' is missing"},
      {R"({"datasets": {"a": "a"}, "phases": [{"until": "5%", "weights": {"a": 1}}]})",
       "m.json: phases[0]: the last phase runs to the end of the run and has no 'until'"},
      {R"({"datasets": {"a": "a"}, "phases": [{"until": "100", "weights": {"a": 1}},
          {"weights": {"a": 1}}]})",
       "'until' \"100\" names no unit"},
      {R"({"datasets": {"a": "a"}, "phases": [{"until": "150%", "weights": {"a": 1}},
          {"weights": {"a": 1}}]})",
       "is not a share in (0%, 100%]"},
      {R"({"datasets": {"a": "a"}, "weights": {"a": 1}, "phases": []})",
       "give either 'weights' (one mixture for the whole run) or 'phases'"},
      {R"({"datasets": {}})", "m.json: 'datasets' must be an object of name -> path"},
      {R"({"datasets": {"a": "a"}, "weights": {"a": [1, 2]}})",
       "m.json: weights: a ramp needs 'phases' with an 'until'"},
      {R"({"datasets": )", "m.json: not valid JSON"},
  };
  for (const auto& [text, want] : cases) {
    auto m = ParseMixtureFile(text, "m.json");
    ASSERT_FALSE(m.ok()) << text;
    EXPECT_NE(m.status().message().find(want), std::string::npos)
        << "got: " << m.status().message() << "\nwant: " << want;
  }
}

TEST(MixtureFileTest, CountsTakeDecimalSuffixes) {
  EXPECT_EQ(*ParseCount("2T"), 2000000000000u);
  EXPECT_EQ(*ParseCount("1.8e12"), 1800000000000u);
  EXPECT_EQ(*ParseCount("500B"), 500000000000u);
  EXPECT_EQ(*ParseCount(" 300M "), 300000000u);
  EXPECT_EQ(*ParseCount("4096"), 4096u);
  EXPECT_FALSE(ParseCount("1.5").ok());
  EXPECT_FALSE(ParseCount("abc").ok());
  EXPECT_FALSE(ParseCount("-3").ok());
}

}  // namespace
}  // namespace stoker::plan
