#include "text/tokenizer_json_pipeline.h"

#include <gtest/gtest.h>

namespace stoker {
namespace {

using Json = nlohmann::json;

// A SentencePiece-style config: "▁", "a", "b", "▁a" (no token holds "▁" after another character,
// so the cut before "▁" is exact), with `normalizer` read in.
BpeTokenizer::Config SpConfig(const Json& normalizer) {
  BpeTokenizer::Config c;
  const std::vector<std::string> tokens = {"\xE2\x96\x81", "a", "b",
                                           "\xE2\x96\x81"
                                           "a"};
  Result<BpeModel> m = BpeModel::Build(tokens, {{0, 1, 0, 3}});
  EXPECT_TRUE(m.ok());
  c.model = std::move(m).value();
  c.model.set_char_symbols({});
  EXPECT_TRUE(ParseNormalizer(normalizer, "t.json", &c).ok());
  return c;
}

Json ReplaceJson(const std::string& from, const std::string& to) {
  return {{"type", "Replace"}, {"pattern", {{"String", from}}}, {"content", to}};
}

Json SplitOn(const std::string& literal, bool invert = false) {
  return {{"type", "Split"},
          {"pattern", {{"String", literal}}},
          {"behavior", "MergedWithPrevious"},
          {"invert", invert}};
}

struct Shape {
  bool regex = false;   // a split stage is left
  bool marker = false;  // the cut before "▁" was added
};

Shape ShapeOf(const BpeTokenizer::Config& c) {
  Shape s;
  for (const BpeTokenizer::Stage& st : c.stages) {
    s.regex = s.regex || st.split != nullptr;
    s.marker = s.marker || (!st.marker.empty() && !st.every);
  }
  return s;
}

// transformers 5's GemmaTokenizer: Replace(" ", "▁") then Split(" ", MergedWithPrevious). No
// space is left to split at, so the split is dropped and the text is cut into words at "▁"
// (before, the whole segment was one word, merged without the cache).
TEST(TokenizerJsonPipelineTest, SplitOnAReplacedSpaceIsDroppedAndTheMarkerCutApplies) {
  BpeTokenizer::Config c = SpConfig(ReplaceJson(" ", "\xE2\x96\x81"));
  ASSERT_TRUE(ParsePreTokenizer(SplitOn(" "), "t.json", true, &c).ok());
  EXPECT_FALSE(ShapeOf(c).regex);
  EXPECT_TRUE(ShapeOf(c).marker);

  // The same behind Prepend, and in a Sequence.
  Json seq = {
      {"type", "Sequence"},
      {"normalizers",
       {{{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}}, ReplaceJson(" ", "\xE2\x96\x81")}}};
  BpeTokenizer::Config d = SpConfig(seq);
  ASSERT_TRUE(ParsePreTokenizer({{"type", "Sequence"}, {"pretokenizers", {SplitOn(" ")}}}, "t.json",
                                true, &d)
                  .ok());
  EXPECT_FALSE(ShapeOf(d).regex);
  EXPECT_TRUE(ShapeOf(d).marker);
}

// Each case where the literal can still be in the text keeps the split (and so no marker cut).
TEST(TokenizerJsonPipelineTest, SplitThatCanMatchIsKept) {
  struct Case {
    const char* what;
    Json normalizer;
    Json split;
  };
  const Case cases[] = {
      {"no normalizer", Json(), SplitOn(" ")},
      {"a replacement that writes the literal back", ReplaceJson(" ", " x"), SplitOn(" ")},
      {"another literal replaced", ReplaceJson("\t", "\xE2\x96\x81"), SplitOn(" ")},
      {"a later Replace brings it back",
       {{"type", "Sequence"},
        {"normalizers", {ReplaceJson(" ", "\xE2\x96\x81"), ReplaceJson("\xE2\x96\x81", " ")}}},
       SplitOn(" ")},
      {"a later Prepend brings it back",
       {{"type", "Sequence"},
        {"normalizers",
         {ReplaceJson(" ", "\xE2\x96\x81"), {{"type", "Prepend"}, {"prepend", " "}}}}},
       SplitOn(" ")},
      {"inverted (the pattern names the pieces)", ReplaceJson(" ", "\xE2\x96\x81"),
       SplitOn(" ", true)},
      {"two characters (a replacement's end and the next may form them)",
       ReplaceJson(" ", "\xE2\x96\x81"), SplitOn("  ")},
  };
  for (const Case& k : cases) {
    BpeTokenizer::Config c = SpConfig(k.normalizer);
    ASSERT_TRUE(ParsePreTokenizer(k.split, "t.json", true, &c).ok()) << k.what;
    EXPECT_TRUE(ShapeOf(c).regex) << k.what;
    EXPECT_FALSE(ShapeOf(c).marker) << k.what;
  }
}

}  // namespace
}  // namespace stoker
