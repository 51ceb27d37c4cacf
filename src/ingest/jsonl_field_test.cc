#include "ingest/jsonl_field.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace stoker {
namespace {

using Outcome = JsonlFieldReader::Outcome;

// What nlohmann (the parser pack used before simdjson) made of the line: the outcome and, when
// found, the text. The reader must agree on every line.
Outcome Nlohmann(const std::string& line, const std::string& field, std::string* text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception&) {
    return Outcome::kInvalidJson;
  }
  if (!j.is_object()) return Outcome::kNotObject;
  auto it = j.find(field);
  if (it == j.end()) return Outcome::kMissing;
  if (!it->is_string()) return Outcome::kNotString;
  *text = it->get<std::string>();
  return Outcome::kFound;
}

TEST(JsonlFieldReaderTest, AgreesWithNlohmannOnEveryKindOfLine) {
  const std::vector<std::string> lines = {
      R"({"text": "hello"})",
      R"({"id": 7, "text": "caf\u00e9 \ud83d\ude00 tab\tnew\nline \"quoted\" \\ \/"})",
      R"({"text": ""})",
      R"(  {"text": "spaces around"}  )",
      R"({"meta": {"text": "nested, not the field"}, "text": "top"})",
      R"({"meta": {"text": "only nested"}})",
      R"({"text": "first", "text": "last wins"})",
      R"({"id": 123456789012345678901234567890, "text": "a big number elsewhere"})",
      R"({"x": 1.5e300, "y": -0, "z": [true, false, null], "text": "numbers"})",
      R"({"text": 3})",
      R"({"text": null})",
      R"({"text": ["a"]})",
      R"({"text": {"a": 1}})",
      R"({"text": true})",
      R"({})",
      R"(["text", "an array"])",
      R"("just a string")",
      R"(42)",
      R"({"text": "trailing"} x)",
      R"({"text": "two values"} {"text": "b"})",
      R"({"text": "unterminated)",
      R"({"text": "lone surrogate \ud800"})",
      R"({"text": "bad escape \q"})",
      "{\"text\": \"raw control \x01 char\"}",
      R"({"text": "no close")",
      R"({text: "unquoted key"})",
      R"({"text": 'single quotes'})",
      R"({"text": "a",})",
      "{\"text\": \"\xc3\xa9 raw UTF-8\"}",
  };
  std::vector<std::string> all = lines;
  // Deeper than simdjson's 1024 levels: valid JSON, which nlohmann took.
  all.push_back(R"({"deep": )" + std::string(2000, '[') + std::string(2000, ']') +
                R"(, "text": "after deep nesting"})");
  JsonlFieldReader reader;
  for (const std::string& line : all) {
    std::string expected_text, why;
    Outcome expected = Nlohmann(line, "text", &expected_text);
    std::string_view text;
    Outcome got = reader.Read(line, "text", &text, &why);
    EXPECT_EQ(static_cast<int>(got), static_cast<int>(expected)) << line << " (" << why << ")";
    if (expected == Outcome::kFound && got == Outcome::kFound) {
      EXPECT_EQ(text, expected_text) << line;
    }
  }
}

TEST(JsonlFieldReaderTest, SaysWhatIsWrong) {
  JsonlFieldReader reader;
  std::string_view text;
  std::string why;
  EXPECT_EQ(reader.Read(R"({"text": 3})", "text", &text, &why), Outcome::kNotString);
  EXPECT_EQ(why, "number");
  EXPECT_EQ(reader.Read(R"({"body": null})", "body", &text, &why), Outcome::kNotString);
  EXPECT_EQ(why, "null");
  why.clear();
  EXPECT_EQ(reader.Read(R"({"text": "x"} ]")", "text", &text, &why), Outcome::kInvalidJson);
  EXPECT_FALSE(why.empty());
  // Another field name.
  EXPECT_EQ(reader.Read(R"({"text": "a", "body": "b"})", "body", &text, &why), Outcome::kFound);
  EXPECT_EQ(text, "b");
}

TEST(JsonlFieldReaderTest, AHugeLineThenSmallOnes) {
  JsonlFieldReader reader;
  std::string big(20 << 20, 'a');  // past the capacity the reader keeps
  std::string line = R"({"text": ")" + big + R"("})";
  std::string_view text;
  std::string why;
  ASSERT_EQ(reader.Read(line, "text", &text, &why), Outcome::kFound);
  EXPECT_EQ(text.size(), big.size());
  EXPECT_EQ(text, big);
  for (int i = 0; i < 3; ++i) {  // the parser is replaced by a small one; results stay right
    std::string small = R"({"text": "small )" + std::to_string(i) + R"("})";
    ASSERT_EQ(reader.Read(small, "text", &text, &why), Outcome::kFound);
    EXPECT_EQ(text, "small " + std::to_string(i));
  }
}

TEST(JsonlFieldReaderTest, ATextViewLastsUntilTheNextRead) {
  JsonlFieldReader& reader = JsonlFieldReader::ForThread();
  EXPECT_EQ(&reader, &JsonlFieldReader::ForThread());
  std::string_view text;
  std::string why;
  std::string line = R"({"text": "kept"})";
  ASSERT_EQ(reader.Read(line, "text", &text, &why), Outcome::kFound);
  line.assign(line.size(), ' ');  // the caller's buffer may change: the view is the reader's
  EXPECT_EQ(text, "kept");
}

}  // namespace
}  // namespace stoker
