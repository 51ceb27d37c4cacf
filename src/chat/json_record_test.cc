#include "chat/json_record.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace stoker {
namespace {

using ojson = nlohmann::ordered_json;

// Equal as nlohmann's == does not check: the same type at every node (unsigned vs signed
// integers, integer vs double), the same keys in the same order, the same bytes.
bool Identical(const ojson& a, const ojson& b) {
  if (a.type() != b.type()) return false;
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
      if (ia.key() != ib.key() || !Identical(*ia, *ib)) return false;
    }
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!Identical(a[i], b[i])) return false;
    }
    return true;
  }
  if (a.is_number_float()) {
    const double x = a.get<double>(), y = b.get<double>();
    return std::memcmp(&x, &y, sizeof x) == 0;  // -0.0 is not 0.0
  }
  return a == b;
}

void ExpectAsNlohmann(const std::string& text) {
  ojson got;
  const bool ok = ParseJsonRecord(text, &got);
  const ojson want = ojson::parse(text, nullptr, false);
  ASSERT_EQ(ok, !want.is_discarded()) << text;
  if (ok) EXPECT_TRUE(Identical(got, want)) << text << "\n got " << got.dump();
}

TEST(JsonRecordTest, ValuesAndTypesAreNlohmanns) {
  const std::vector<std::string> cases = {
      R"({"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Yo"}]})",
      R"({"a":1,"b":-1,"c":0,"d":-0,"e":-0.0,"f":0.0,"g":1.5,"h":1E2,"i":-1e-400,"j":0e10})",
      R"({"a":18446744073709551615,"b":-9223372036854775808,"c":9223372036854775807})",
      R"({"a":18446744073709551616,"b":-9223372036854775809,"c":123456789012345678901234})",
      R"({"a":1.7976931348623157e308,"b":4.9e-324,"c":2.2250738585072011e-308,"d":0.1})",
      R"({"a":"\u0000\/\b\f\n\r\t\"\\","b":"\ud83d\ude80","c":"\u00e9","d":"é 数据 🙂"})",
      R"({"a":1,"b":2,"a":3})",
      R"({"ab":1,"a\u0062":2,"":3})",
      R"({"a":[1,[2,[3,{"x":null,"y":true,"z":false}]]],"b":{},"c":[]})",
      R"({"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image"}]}]})",
      R"({"tools":[{"type":"function","function":{"name":"f","parameters":{"z":1,"a":2}}}]})",
      R"(  {"a":1}  )",
      "{\"a\":1}\n",
      "{\"a\":1}\t\r ",
      R"([1,2])",
      R"("just a string")",
      R"(42)",
      R"(null)",
      "\xEF\xBB\xBF{\"bom\":1}",
  };
  for (const std::string& c : cases) ExpectAsNlohmann(c);
}

TEST(JsonRecordTest, RefusesWhatNlohmannRefuses) {
  const std::vector<std::string> cases = {
      R"({"a":1} x)",
      R"({"a":1}{"b":2})",
      R"({"a":1,})",
      R"({"a":[1,]})",
      R"({"a":01})",
      R"({"a":1.})",
      R"({"a":.5})",
      R"({"a":+1})",
      R"({"a":tru})",
      R"({"a":NaN})",
      R"({"a":"\x"})",
      R"({"a":"\u12"})",
      R"({"a":"\ud800"})",
      R"({"a":"\udc00"})",
      R"({"a":"\ud800x"})",
      R"({"a":"\ud800\u0041"})",
      R"({"a":1e400})",
      "{\"a\":\"x\x01y\"}",
      R"({a:1})",
      R"({'a':1})",
      R"({"a":1)",
      R"({"a")",
      "",
      "   ",
      std::string("{\"a\":1}\0", 8),
  };
  for (const std::string& c : cases) ExpectAsNlohmann(c);
}

TEST(JsonRecordTest, DeepNestingIsReadByNlohmann) {
  const std::string deep = "{\"a\":" + std::string(3000, '[') + std::string(3000, ']') + "}";
  ExpectAsNlohmann(deep);
}

TEST(JsonRecordTest, ABigRecordThenASmallOne) {
  std::string big = "{\"a\":\"" + std::string(17 << 20, 'x') + "\"}";
  ExpectAsNlohmann(big);
  ExpectAsNlohmann(R"({"b":[1,2,3]})");
}

// Random records built from pieces that are sometimes valid and sometimes not.
TEST(JsonRecordTest, RandomRecordsAsNlohmann) {
  const std::vector<std::string> atoms = {"0",
                                          "-0",
                                          "1",
                                          "-7",
                                          "3.25",
                                          "-0.0",
                                          "1e5",
                                          "2E-3",
                                          "true",
                                          "false",
                                          "null",
                                          "\"\"",
                                          "\"a\"",
                                          "\"\\n\"",
                                          "\"\\u00e9\"",
                                          "\"数\"",
                                          "\"\\ud83d\\ude80\"",
                                          "18446744073709551615",
                                          "18446744073709551616",
                                          "\"\\ud800\"",
                                          "01",
                                          "\"\\q\"",
                                          "nul"};
  std::mt19937 rng(25);
  std::function<std::string(int)> value = [&](int depth) -> std::string {
    const int kind = depth > 3 ? 2 : int(rng() % 3);
    if (kind == 0) {
      std::string s = "{";
      const int n = rng() % 4;
      for (int i = 0; i < n; ++i) {
        if (i) s += ",";
        s += "\"k" + std::to_string(rng() % 3) + "\":" + value(depth + 1);
      }
      return s + "}";
    }
    if (kind == 1) {
      std::string s = "[";
      const int n = rng() % 4;
      for (int i = 0; i < n; ++i) {
        if (i) s += ",";
        s += value(depth + 1);
      }
      return s + "]";
    }
    return atoms[rng() % atoms.size()];
  };
  for (int i = 0; i < 3000; ++i) ExpectAsNlohmann("{\"r\":" + value(0) + "}");
}

}  // namespace
}  // namespace stoker
