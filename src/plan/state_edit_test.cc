// SkipStepsInState: the skip range in global rows, the loader wrapper kept, each refusal.
#include "plan/state_edit.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "stoker/plan.h"

namespace stoker {
namespace {

PlanState StateAtStep(uint64_t step) {
  PlanState s;
  s.position = {2, step * 8};  // 4 ranks of 2 rows: 8 global rows a step
  s.fingerprint = "abc";
  s.world_size = 4;
  s.batch_size = 2;
  return s;
}

TEST(SkipStepsInState, AddsTheStepsAsGlobalRowsOfTheEpoch) {
  Result<std::string> out = SkipStepsInState(StateAtStep(3).ToJson(), 5, 7);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  nlohmann::json j = nlohmann::json::parse(*out);
  ASSERT_EQ(j["skip"].size(), 1u);
  EXPECT_EQ(j["skip"][0]["epoch"], 2);
  EXPECT_EQ(j["skip"][0]["from"], 40);
  EXPECT_EQ(j["skip"][0]["to"], 64);
  EXPECT_EQ(j["skip"][0]["steps"], "5..7");
  // The edited state still reads as the same position.
  Result<PlanState> back = PlanState::FromJson(*out);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->position, StateAtStep(3).position);
  // A second edit appends.
  Result<std::string> twice = SkipStepsInState(*out, 9, 9);
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(nlohmann::json::parse(*twice)["skip"].size(), 2u);
}

TEST(SkipStepsInState, KeepsTheLoaderWrapper) {
  nlohmann::json loader = {{"format", "stoker-loader-state"},
                           {"version", 1},
                           {"plan_state", nlohmann::json::parse(StateAtStep(0).ToJson())}};
  Result<std::string> out = SkipStepsInState(loader.dump(), 0, 0);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  nlohmann::json j = nlohmann::json::parse(*out);
  EXPECT_EQ(j["format"], "stoker-loader-state");
  EXPECT_EQ(j["plan_state"]["skip"][0]["to"], 8);
}

TEST(SkipStepsInState, RefusesWhatCannotBeSkipped) {
  auto message = [](const std::string& json, uint64_t a, uint64_t b) {
    Result<std::string> out = SkipStepsInState(json, a, b);
    EXPECT_FALSE(out.ok());
    return out.ok() ? std::string() : out.status().message();
  };

  EXPECT_NE(message(StateAtStep(3).ToJson(), 2, 5).find("step 2 was served already"),
            std::string::npos);
  EXPECT_NE(message(StateAtStep(3).ToJson(), 6, 5).find("the last step is before the first"),
            std::string::npos);
  PlanState stream = StateAtStep(0);
  stream.stream = "{}";
  EXPECT_NE(message(stream.ToJson(), 1, 2).find("stoker.Stream's state"), std::string::npos);
  PlanState bare = StateAtStep(0);
  bare.world_size = 0;
  EXPECT_NE(message(bare.ToJson(), 1, 2).find("no world size"), std::string::npos);
  EXPECT_NE(message("{", 1, 2).find("malformed"), std::string::npos);
}

TEST(DropSourceInState, AddsTheNameAndRefusesWhatCannotBeDropped) {
  PlanState s = StateAtStep(1);
  for (const char* name : {"web", "code", "math"})
    s.datasets.push_back({name, "id", 1, 1, 0, 0, 0});
  Result<std::string> out = DropSourceInState(s.ToJson(), "code");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(nlohmann::json::parse(*out)["drop"], nlohmann::json::array({"code"}));
  Result<std::string> again = DropSourceInState(*out, "web");
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("fewer than two datasets would be left"),
            std::string::npos);
  Result<std::string> unknown = DropSourceInState(s.ToJson(), "wiki");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("no dataset of that name (its datasets: web, code, "
                                            "math)"),
            std::string::npos);
  Result<std::string> single = DropSourceInState(StateAtStep(1).ToJson(), "web");
  ASSERT_FALSE(single.ok());
  EXPECT_NE(single.status().message().find("not a mixture's"), std::string::npos);
}

}  // namespace
}  // namespace stoker
