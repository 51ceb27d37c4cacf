#include "text/tokenizer_json_scan.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "text/tokenizer_json.h"

namespace stoker {
namespace {

// A byte-level file: the 256 byte characters written as \u escapes, then "he" "ll" "hell" "hello"
// and `vocab_extra`; merges `merges`; `model_extra` and `top_extra` are more fields.
std::string EscapedVocabJson(const std::string& vocab_extra = "",
                             const std::string& merges = R"("h e", ["l", "l"], "he ll", "hell o")",
                             const std::string& model_extra = "",
                             const std::string& top_extra = "") {
  std::string vocab;
  for (int b = 0; b < 256; ++b) {
    char key[16];
    std::snprintf(key, sizeof key, "\"\\u%04X\"", static_cast<unsigned>(ByteLevelChar(b)));
    vocab += std::string(key) + ": " + std::to_string(b) + ", ";
  }
  vocab += R"("he": 256, "ll": 257, "hell": 258, "hello": 259, "<|endoftext|>": 260)" + vocab_extra;
  return R"({"truncation": null, "normalizer": null,
    "added_tokens": [{"id": 260, "content": "<|endoftext|>", "special": true, "normalized": false},
                     {"id": 5, "content": "hello", "special": false},
                     {"id": 6, "content": "<new>", "special": true}],
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
    "post_processor": null, )" +
         top_extra + R"( "model": {"type": "BPE", )" + model_extra + R"( "vocab": {)" + vocab +
         R"(}, "merges": [)" + merges + "]}}";
}

// Both readers give the same tokenizer (the same ids for some texts, the same bytes for every id)
// or the same error; `fast`: whether TokenizerJsonScan takes the file.
void ExpectSameAsDom(const std::string& json, bool fast, const std::string& label) {
  SCOPED_TRACE(label);
  EXPECT_EQ(TokenizerJsonScan::Scan(json, "t.json") != nullptr, fast);
  for (bool allow_special : {false, true}) {
    TokenizerOptions options;
    options.allow_special = allow_special;
    auto got = ParseTokenizerJson(json, "t.json", options);
    auto want = ParseTokenizerJsonWithDom(json, "t.json", options);
    ASSERT_EQ(got.ok(), want.ok()) << (got.ok() ? want : got).status().ToString();
    if (!got.ok()) {
      EXPECT_EQ(got.status().ToString(), want.status().ToString());
      continue;
    }
    const BpeTokenizer &g = **got, &w = **want;
    EXPECT_EQ(g.vocab_size(), w.vocab_size());
    EXPECT_EQ(g.eos_id(), w.eos_id());
    EXPECT_EQ(g.identity().name, w.identity().name);
    EXPECT_EQ(g.identity().checksum, w.identity().checksum);
    for (const char* text :
         {"hello", "hhee llo hello", "<|endoftext|> zz<new>", "\xc3\xa9t\xc3\xa9"}) {
      std::vector<int32_t> gi, wi;
      ASSERT_EQ(g.Encode(text, &gi).ok(), w.Encode(text, &wi).ok()) << text;
      EXPECT_EQ(gi, wi) << text;
    }
    for (int32_t id = 0; id < static_cast<int32_t>(w.vocab_size()); ++id) {
      std::string gb, wb;
      const int32_t one[] = {id};
      EXPECT_EQ(g.Decode(one, &gb).ToString(), w.Decode(one, &wb).ToString()) << id;
      EXPECT_EQ(gb, wb) << id;
    }
  }
}

TEST(TokenizerJsonScanTest, PlainFilesAreReadFastAndExactlyAsTheDom) {
  ExpectSameAsDom(EscapedVocabJson(), true, "escaped keys, merges as strings and pairs");
  ExpectSameAsDom(EscapedVocabJson(R"(, "zz": 300)"), true, "a hole in the ids");
  ExpectSameAsDom(EscapedVocabJson("", R"("h e")", R"("unk_token": "h", "fuse_unk": true,)"), true,
                  "unk_token");
  ExpectSameAsDom(EscapedVocabJson("", R"("h e")", R"("dropout": 18446744073709551616,)"), true,
                  "a number above 2^64, in a field nlohmann reads");
  ExpectSameAsDom(EscapedVocabJson("", R"("h e")", "", R"("normalizer": {"type": "NFC"},)"), true,
                  "a top-level key twice: the last one counts");
  ExpectSameAsDom(EscapedVocabJson("", R"("h e")", "", R"("truncation": {"max_length": 1},)"), true,
                  "a top-level key twice: the last one counts (here an error)");
  std::string escaped_model = EscapedVocabJson();
  escaped_model.replace(escaped_model.find("\"model\""), 7, "\"mod\\u0065l\"");
  ExpectSameAsDom(escaped_model, true, "an escaped top-level key");
  std::string reordered = R"({"model": {"merges": ["h e"], "vocab": {"h": 0, "e": 1, "he": 2},
                              "type": "BPE"}, "added_tokens": []})";
  ExpectSameAsDom(reordered, true, "merges before vocab");
  ExpectSameAsDom(R"({"model": {"vocab": {}, "merges": []}})", true, "an empty vocabulary");
}

TEST(TokenizerJsonScanTest, MergeErrorsNameTheMergeOnBothPaths) {
  ExpectSameAsDom(EscapedVocabJson("", R"("h e", "he zz")"), true, "a token not in the vocab");
  ExpectSameAsDom(EscapedVocabJson("", R"("h e", ["he", "llo"])"), true, "a pair not in the vocab");
  ExpectSameAsDom(EscapedVocabJson("", R"("h e", "hell o", "hello h")"), true, "merged token");
  ExpectSameAsDom(EscapedVocabJson(R"(, "€": 261, "€€": 262)", R"("€ €")"), true, "not byte-level");
  ExpectSameAsDom(EscapedVocabJson("", R"("h e")", R"("type": "WordPiece",)"), true, "model.type");
  std::string many;  // the error is in the second window of merges looked up at once
  for (int i = 0; i < 40; ++i) many += R"("h e", )";
  ExpectSameAsDom(EscapedVocabJson("", many + R"(["he", "zz"])"), true, "merge 40");
  for (bool fast : {true, false}) {  // ["h", "e", "l"] sends the file to the DOM reader
    auto m = ParseTokenizerJson(
        EscapedVocabJson("", many + (fast ? R"("he zz")" : R"("he zz", ["h", "e", "l"])")),
        "t.json", {});
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().message(),
              "t.json: model.merges[40]: the token 'zz' is not in model.vocab");
  }
  ExpectSameAsDom(EscapedVocabJson("", R"("h e", "h  e", "he zz")"), false,
                  "a malformed merge before a wrong one");
  ExpectSameAsDom(EscapedVocabJson("", R"("h e", "he zz", "h  e")"), false,
                  "a wrong merge before a malformed one");
  auto t = ParseTokenizerJson(EscapedVocabJson("", R"("h e", "ll o", "he zz")"), "d/t.json", {});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            "d/t.json: model.merges[1]: the merged token 'llo' is not in model.vocab");
}

// What the fast reader leaves to nlohmann: the result, or the error, is the DOM's.
TEST(TokenizerJsonScanTest, OddFilesGoToTheDomReader) {
  const std::string good = EscapedVocabJson();
  ExpectSameAsDom(good.substr(0, good.size() / 2), false, "truncated");
  ExpectSameAsDom(good + "}", false, "trailing content");
  ExpectSameAsDom(good + " x", false, "trailing content");
  ExpectSameAsDom("[1, 2]", false, "not an object");
  // Found by the fuzzer: a string value followed by ':' passed simdjson's skip of that value.
  ExpectSameAsDom(R"({"mldel": "{type": "BPE", "model": {"vocab": {}, "merges": []}})", false,
                  "a colon after a value");
  ExpectSameAsDom(R"({"a": 1: 2, "model": {"vocab": {}, "merges": []}})", false, "after a number");
  // Also from the fuzzer: an id bigger than the file (here in a file that is not JSON) is left to
  // the DOM reader, which refuses the file before it sizes anything by that id.
  EXPECT_EQ(TokenizerJsonScan::Scan(R"({"model": {"vocab": {"e": 1333333338{ "x": 3}}})", "t.json"),
            nullptr);
  ExpectSameAsDom(EscapedVocabJson(R"(, "zz": 20000)"), false, "an id above the file size");
  ExpectSameAsDom(R"({"a": true: 2, "model": {"vocab": {}, "merges": []}})", false, "after true");
  ExpectSameAsDom(R"({"model": {"type": "BPE": 1, "vocab": {}, "merges": []}})", false,
                  "in the model");
  ExpectSameAsDom(R"({"model": 5})", false, "model not an object");
  ExpectSameAsDom(EscapedVocabJson(R"(, "zz": 261, "zz": 262)"), false, "a vocab key twice");
  ExpectSameAsDom(EscapedVocabJson(R"(, "zz": 259)"), false, "an id twice");
  for (const char* id :
       {"-0", "1.0", "\"5\"", "-3", "2147483647", "18446744073709551616", "null"}) {
    ExpectSameAsDom(EscapedVocabJson(std::string(R"(, "zz": )") + id), false, id);
  }
  ExpectSameAsDom(EscapedVocabJson(R"(, "\udc00": 261)"), false, "a lone surrogate");
  ExpectSameAsDom(EscapedVocabJson(R"(, "\x": 261)"), false, "a bad escape");
  ExpectSameAsDom(EscapedVocabJson(", \"z\x01\": 261"), false, "a control character");
  ExpectSameAsDom(EscapedVocabJson(", \"z\xff\": 261"), false, "invalid UTF-8");
  for (const char* merges : {R"("h  e")", R"("he")", R"(["h"])", R"(["h", "e", "l"])",
                             R"(["h", 5])", "5", R"("h e", null)"}) {
    ExpectSameAsDom(EscapedVocabJson("", merges), false, merges);
  }
  std::string twice = good;
  twice.replace(twice.find("\"model\""), 7, R"("model": {"vocab": {}}, "model")");
  ExpectSameAsDom(twice, false, "model twice");
  ExpectSameAsDom(EscapedVocabJson("", R"("h e")", R"("vocab": {"h": 0},)"), false, "vocab twice");
  ExpectSameAsDom(EscapedVocabJson("", R"("h e")", R"("merges": [],)"), false, "merges twice");
  ExpectSameAsDom(R"({"model": {"vocab": [], "merges": []}})", false, "vocab not an object");
  ExpectSameAsDom(EscapedVocabJson("", R"("h e")", R"("dropout": 1e400,)"), false,
                  "a number nlohmann refuses");
}

}  // namespace
}  // namespace stoker
