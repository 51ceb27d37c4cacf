#include "text/padded_json.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace stoker {
namespace {

std::string_view StringField(const simdjson::dom::element& root, std::string_view key) {
  std::string_view out;
  EXPECT_EQ(root[key].get(out), simdjson::SUCCESS);
  return out;
}

TEST(PaddedJsonParserTest, ParsesOnlyTheViewNotTheBytesAfterIt) {
  // The view ends inside a larger buffer whose next bytes would make the JSON invalid.
  const std::string buffer = R"({"text": "hi"}garbage that is not JSON)";
  PaddedJsonParser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.Parse(std::string_view(buffer).substr(0, 14), &root), simdjson::SUCCESS);
  EXPECT_EQ(StringField(root, "text"), "hi");
}

TEST(PaddedJsonParserTest, AShorterTextAfterALongerOneIsNotReadPastItsEnd) {
  PaddedJsonParser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.Parse(R"({"text": ")" + std::string(1000, 'x') + R"("})", &root),
            simdjson::SUCCESS);
  // The buffer still holds the longer text's bytes after the shorter one.
  ASSERT_EQ(parser.Parse(R"({"a": 1})", &root), simdjson::SUCCESS);
  int64_t a = 0;
  ASSERT_EQ(root["a"].get(a), simdjson::SUCCESS);
  EXPECT_EQ(a, 1);
  EXPECT_NE(parser.Parse(R"({"a": )", &root), simdjson::SUCCESS);
}

TEST(PaddedJsonParserTest, ParsesAgainAfterATextOverTheKeptCapacity) {
  PaddedJsonParser parser;
  simdjson::dom::element root;
  const std::string huge = R"({"text": ")" + std::string(17 << 20, 'y') + R"("})";
  ASSERT_EQ(parser.Parse(huge, &root), simdjson::SUCCESS);
  EXPECT_EQ(StringField(root, "text").size(), size_t(17) << 20);
  ASSERT_EQ(parser.Parse(R"({"text": "small"})", &root), simdjson::SUCCESS);
  EXPECT_EQ(StringField(root, "text"), "small");
}

}  // namespace
}  // namespace stoker
