// BpeTokenizer through its loaders, on small hand-made files: the pipeline pieces and every
// bad-input error (each names the file and the line or JSON field).
#include "text/bpe_tokenizer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "text/tiktoken_file.h"
#include "text/tokenizer_json.h"

namespace stoker {
namespace {

std::string TempFile(const std::string& name, const std::string& contents) {
  auto path = std::filesystem::temp_directory_path() / ("stoker_bpe_" + name);
  std::ofstream(path, std::ios::binary) << contents;
  return path.string();
}

std::string Base64(std::string_view s) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < s.size(); i += 3) {
    uint32_t v = static_cast<uint8_t>(s[i]) << 16;
    if (i + 1 < s.size()) v |= static_cast<uint8_t>(s[i + 1]) << 8;
    if (i + 2 < s.size()) v |= static_cast<uint8_t>(s[i + 2]);
    out += k[(v >> 18) & 63];
    out += k[(v >> 12) & 63];
    out += i + 1 < s.size() ? k[(v >> 6) & 63] : '=';
    out += i + 2 < s.size() ? k[v & 63] : '=';
  }
  return out;
}

// 256 bytes, then "he", "ll", "hell", "hello", " w".
std::string SmallTiktoken() {
  std::string f;
  for (int b = 0; b < 256; ++b)
    f += Base64(std::string(1, static_cast<char>(b))) + " " + std::to_string(b) + "\n";
  int r = 256;
  for (const char* t : {"he", "ll", "hell", "hello", " w"})
    f += Base64(t) + " " + std::to_string(r++) + "\n";
  return f;
}

TokenizerOptions Cl100kOptions() {
  TokenizerOptions o;
  o.pattern = "cl100k";
  o.special = "<|endoftext|>=300";
  return o;
}

TEST(TiktokenFileTest, EncodesDecodesAndKnowsItsIdentity) {
  std::string path = TempFile("small.tiktoken", SmallTiktoken());
  auto t = OpenTiktokenFile(path, Cl100kOptions());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  std::vector<int32_t> ids;
  ASSERT_TRUE((*t)->Encode("hello world<|endoftext|>", &ids).ok());
  EXPECT_EQ(ids[0], 259);  // "hello" in one piece
  EXPECT_EQ(ids[1], 260);  // " w"
  EXPECT_EQ((*t)->vocab_size(), 301u);
  EXPECT_EQ((*t)->eos_id(), 300);
  EXPECT_EQ((*t)->identity().kind, "tiktoken");
  EXPECT_EQ((*t)->identity().checksum.size(), 16u);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 300), 0);  // special text is ordinary text
  std::string back;
  ASSERT_TRUE((*t)->Decode(ids, &back).ok());
  EXPECT_EQ(back, "hello world<|endoftext|>");

  TokenizerOptions allow = Cl100kOptions();
  allow.allow_special = true;
  auto ta = OpenTiktokenFile(path, allow);
  ASSERT_TRUE(ta.ok());
  ids.clear();
  ASSERT_TRUE((*ta)->Encode("hello<|endoftext|>", &ids).ok());
  EXPECT_EQ(ids, (std::vector<int32_t>{259, 300}));
  EXPECT_NE((*ta)->identity().name, (*t)->identity().name);
  std::filesystem::remove(path);
}

// Pre-tokens of 17 to 64 bytes go through the long-piece cache (since session 36 for byte-level
// BPE too): the second encode of a text, served from the caches, gives the first one's ids, and so
// does a piece of the same length with other bytes (a collision must be a miss, never its ids).
TEST(TiktokenFileTest, LongPiecesFromTheCacheKeepTheirIds) {
  std::string path = TempFile("long.tiktoken", SmallTiktoken());
  auto t = OpenTiktokenFile(path, Cl100kOptions());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const std::string hellos = "hellohellohellohellohello";  // one \p{L}+ piece of 25 bytes
  const std::string other = "hellohellohellohellohelly";   // same length, last byte differs
  const std::string text = hellos + " " + other + " " + std::string(70, 'h') + "ello";
  std::vector<int32_t> first, second;
  ASSERT_TRUE((*t)->Encode(text, &first).ok());
  ASSERT_TRUE((*t)->Encode(text, &second).ok());
  EXPECT_EQ(second, first);
  EXPECT_EQ(std::vector<int32_t>(first.begin(), first.begin() + 5),
            (std::vector<int32_t>(5, 259)));  // "hello" x5
  std::vector<int32_t> alone;
  ASSERT_TRUE((*t)->Encode(other, &alone).ok());
  EXPECT_EQ(alone, (std::vector<int32_t>{259, 259, 259, 259, 258, static_cast<int32_t>('y')}));
  std::string back;
  ASSERT_TRUE((*t)->Decode(second, &back).ok());
  EXPECT_EQ(back, text);
  std::filesystem::remove(path);
}

// A pre-token of up to 16 bytes with more than PieceCache::kMaxIds ids goes to the long-piece
// cache (since session 37): read back from there, and a piece of the same length with other bytes
// still gets its own ids.
TEST(TiktokenFileTest, ShortPiecesOfManyIdsFromTheCacheKeepTheirIds) {
  std::string path = TempFile("short.tiktoken", SmallTiktoken());
  auto t = OpenTiktokenFile(path, Cl100kOptions());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const std::string many = "helloxhelloxzq";  // one \p{L}+ piece of 14 bytes, 6 ids
  const std::string other = "helloxhelloxzr";
  std::vector<int32_t> first, second, alone;
  ASSERT_TRUE((*t)->Encode(many, &first).ok());
  ASSERT_TRUE((*t)->Encode(many, &second).ok());
  const std::vector<int32_t> want = {259, 'x', 259, 'x', 'z', 'q'};
  EXPECT_EQ(first, want);
  EXPECT_EQ(second, want);
  ASSERT_TRUE((*t)->Encode(other, &alone).ok());
  EXPECT_EQ(alone, (std::vector<int32_t>{259, 'x', 259, 'x', 'z', 'r'}));
  second.clear();
  ASSERT_TRUE((*t)->Encode(other + " " + many, &second).ok());
  EXPECT_EQ(std::vector<int32_t>(second.end() - 6, second.end()), want);
  std::filesystem::remove(path);
}

// "Pack" in the name: scripts/test --tsan runs it (a shared tokenizer, as pack threads use it).
TEST(TiktokenFileTest, SharedInstanceEncodesConcurrentlyAsPackDoes) {
  std::string path = TempFile("threads.tiktoken", SmallTiktoken());
  std::string text;
  for (int i = 0; i < 200; ++i)
    text += "hello world " + std::to_string(i) + std::string(60, 'l') + " ";
  for (const char* pattern : {"cl100k", "o200k"}) {  // the scanner and the PCRE2 path
    TokenizerOptions o = Cl100kOptions();
    o.pattern = pattern;
    auto t = OpenTiktokenFile(path, o);
    ASSERT_TRUE(t.ok());
    std::vector<int32_t> expected;
    ASSERT_TRUE((*t)->Encode(text, &expected).ok());
    std::vector<int> mismatches(4, 0);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
      threads.emplace_back([&, i] {
        for (int k = 0; k < 20; ++k) {
          std::vector<int32_t> ids;
          if (!(*t)->Encode(text, &ids).ok() || ids != expected) ++mismatches[i];
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(mismatches, std::vector<int>(4, 0)) << pattern;
  }
  std::filesystem::remove(path);
}

struct BadTiktoken {
  const char* name;
  std::string contents;
  TokenizerOptions options;
  const char* expect;
};

TEST(TiktokenFileTest, BadInputNamesFileAndLine) {
  std::string good = SmallTiktoken();
  TokenizerOptions regex_bad = Cl100kOptions();
  regex_bad.pattern = "(unclosed";
  TokenizerOptions no_pattern = Cl100kOptions();
  no_pattern.pattern.clear();
  TokenizerOptions collide = Cl100kOptions();
  collide.special = "<|endoftext|>=257";
  TokenizerOptions no_eos = Cl100kOptions();
  no_eos.special = "<|x|>=300";
  const BadTiktoken cases[] = {
      {"b64", good + "!!notbase64 400\n", Cl100kOptions(), ":262: the token '!!notbase64'"},
      {"dup", good + Base64("zz") + " 256\n", Cl100kOptions(),
       ":262: duplicate rank 256 (first on line 257)"},
      {"norank", good + Base64("zz") + "\n", Cl100kOptions(), ":262: expected"},
      {"badrank", good + Base64("zz") + " -4\n", Cl100kOptions(), ":262: the rank '-4'"},
      {"big", good + Base64("zz") + " 4294967296\n", Cl100kOptions(), "does not fit a 32-bit"},
      {"regex", good, regex_bad, "does not compile"},
      {"nopattern", good, no_pattern, "needs --pattern"},
      {"collide", good, collide, "collides with the rank on line 258"},
      {"noeos", good, no_eos, "no end-of-text token"},
      {"nobytes", Base64("ab") + " 0\n", Cl100kOptions(), "single byte"},
  };
  for (const auto& c : cases) {
    std::string path = TempFile(std::string(c.name) + ".tiktoken", c.contents);
    auto t = OpenTiktokenFile(path, c.options);
    ASSERT_FALSE(t.ok()) << c.name;
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(t.status().message().find(path), std::string::npos) << t.status().message();
    EXPECT_NE(t.status().message().find(c.expect), std::string::npos) << t.status().message();
    std::filesystem::remove(path);
  }
}

// A file of about 600 KB, so that its lines are parsed in parts on several threads: the same
// tokenizer, and for each bad line (early, in the middle, late, a duplicate across parts) the
// same message naming the same line as one thread gives.
TEST(TiktokenFileTest, LinesParsedOnManyThreadsGiveTheSameTokenizerAndErrors) {
  std::string good = SmallTiktoken();
  int rank = 261;
  std::vector<std::string> lines;
  for (int i = 0; i < 40000; ++i) {
    lines.push_back(Base64("t" + std::to_string(i)) + " " + std::to_string(rank++) + "\n");
  }
  auto file = [&](size_t at, const std::string& bad) {
    std::string f = good;
    for (size_t i = 0; i < lines.size(); ++i) f += (i == at ? bad : "") + lines[i];
    return f;
  };
  TokenizerOptions one = Cl100kOptions(), many = Cl100kOptions();
  one.special = many.special = "<|endoftext|>=50000";
  one.load_threads = 1;
  many.load_threads = 8;
  {
    std::string path = TempFile("many.tiktoken", file(lines.size(), ""));
    auto a = OpenTiktokenFile(path, one);
    auto b = OpenTiktokenFile(path, many);
    ASSERT_TRUE(a.ok() && b.ok()) << b.status().ToString();
    std::vector<int32_t> ia, ib;
    ASSERT_TRUE((*a)->Encode("hello t123 t39999 world", &ia).ok());
    ASSERT_TRUE((*b)->Encode("hello t123 t39999 world", &ib).ok());
    EXPECT_EQ(ia, ib);
    EXPECT_EQ((*a)->identity().checksum, (*b)->identity().checksum);
    std::filesystem::remove(path);
  }
  const std::pair<size_t, std::string> bad[] = {
      {10, "!!bad 1\n"},
      {20000, Base64("zz") + "\n"},
      {39990, Base64("zz") + " 300\n"},  // rank 300 is on line 262 + 39: an earlier part
      {25000, "\r\n\n" + Base64("zz") + " x\n"},
  };
  for (const auto& [at, line] : bad) {
    std::string path = TempFile("many_bad.tiktoken", file(at, line));
    auto a = OpenTiktokenFile(path, one);
    auto b = OpenTiktokenFile(path, many);
    ASSERT_FALSE(a.ok() || b.ok()) << at;
    EXPECT_EQ(a.status().message(), b.status().message());
    EXPECT_NE(
        a.status().message().find(":" + std::to_string(262 + at + (at == 25000 ? 2 : 0)) + ": "),
        std::string::npos)
        << a.status().message();
    std::filesystem::remove(path);
  }
}

// A byte-level tokenizer.json: "Ġ" is the space byte, "h e" "l l" "he ll" "hell o" merges.
std::string SmallJson(const std::string& model_extra = "", const std::string& top_extra = "") {
  std::string vocab;
  int id = 0;
  for (int b = 0; b < 256; ++b) {
    char32_t cp = ByteLevelChar(static_cast<uint8_t>(b));
    std::string u;
    if (cp < 0x80) {
      u = std::string(1, static_cast<char>(cp));
      if (u == "\"" || u == "\\") u = "\\" + u;
    } else {
      u += static_cast<char>(0xC0 | (cp >> 6));
      u += static_cast<char>(0x80 | (cp & 0x3F));
    }
    vocab += "\"" + u + "\": " + std::to_string(id++) + ", ";
  }
  vocab += R"("he": 256, "ll": 257, "hell": 258, "hello": 259, "<|endoftext|>": 260)";
  return R"({"version": "1.0", "truncation": null, "normalizer": null,
    "added_tokens": [{"id": 260, "content": "<|endoftext|>", "special": true, "normalized": false}],
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
    "post_processor": null, )" +
         top_extra + R"(
    "model": {"type": "BPE", "vocab": {)" +
         vocab + R"(}, )" + model_extra + R"( "merges": ["h e", ["l", "l"], "he ll", "hell o"]}})";
}

TEST(TokenizerJsonTest, EncodesAHandMadeFile) {
  auto t = ParseTokenizerJson(SmallJson(), "small.json", {});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  std::vector<int32_t> ids;
  ASSERT_TRUE((*t)->Encode("hello<|endoftext|>", &ids).ok());
  EXPECT_EQ(ids[0], 259);
  EXPECT_EQ((*t)->eos_id(), 260);
  EXPECT_EQ((*t)->vocab_size(), 261u);
  TokenizerOptions allow;
  allow.allow_special = true;
  auto ta = ParseTokenizerJson(SmallJson(), "small.json", allow);
  ASSERT_TRUE(ta.ok());
  ids.clear();
  ASSERT_TRUE((*ta)->Encode("hello<|endoftext|>", &ids).ok());
  EXPECT_EQ(ids, (std::vector<int32_t>{259, 260}));
}

std::string Replace(std::string s, std::string_view from, std::string_view to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

// Chat encoding's text of a control token from a conversation (chat/chat_encoder.h): no added
// token is matched, special or not, whatever allow_special says.
TEST(TokenizerJsonTest, MatchingNoAddedTokensReadsThemAsText) {
  const std::string plain_added =
      Replace(SmallJson(), R"("special": true, "normalized": false)", R"("special": false)");
  TokenizerOptions none;
  none.allow_special = true;
  none.match_added_tokens = false;
  for (const std::string& json : {SmallJson(), plain_added}) {
    auto matched = ParseTokenizerJson(json, "small.json", {});
    auto unmatched = ParseTokenizerJson(json, "small.json", none);
    ASSERT_TRUE(matched.ok() && unmatched.ok());
    std::vector<int32_t> ids;
    ASSERT_TRUE((*unmatched)->Encode("hello<|endoftext|>", &ids).ok());
    EXPECT_EQ(ids[0], 259);
    EXPECT_EQ(std::count(ids.begin(), ids.end(), 260), 0);
    EXPECT_NE((*unmatched)->identity().name, (*matched)->identity().name);
  }
  std::vector<int32_t> ids;  // a non-special added token is matched by default
  ASSERT_TRUE(
      (*ParseTokenizerJson(plain_added, "small.json", {}))->Encode("<|endoftext|>", &ids).ok());
  EXPECT_EQ(ids, std::vector<int32_t>{260});
}

TEST(TokenizerJsonTest, BadInputNamesFileAndField) {
  std::string good = SmallJson();
  auto R = [&](std::string_view from, std::string_view to) { return Replace(good, from, to); };
  struct Case {
    std::string json;
    const char* expect;
  } cases[] = {
      {good.substr(0, good.size() / 2), "not valid JSON at byte"},
      {"[1, 2]", "top level"},
      {SmallJson("\"dropout\": 0.1,"), "model.dropout"},
      {SmallJson("\"byte_fallback\": true,"), "model.byte_fallback"},
      {SmallJson("\"continuing_subword_prefix\": \"##\","), "model.continuing_subword_prefix"},
      {R("\"BPE\"", "\"WordPiece\""), "model.type"},
      {R("\"he ll\"", "\"he zz\""), "model.merges[2]: the token 'zz' is not in model.vocab"},
      {R("\"hell o\"", "\"hello o\""), "model.merges[3]: the merged token"},
      {R("\"normalizer\": null", "\"normalizer\": {\"type\": \"Lowercase\"}"), "normalizer.type"},
      {R("\"normalizer\": null", "\"normalizer\": {\"type\": \"Strip\", \"strip_left\": 1}"),
       "normalizer.strip_left: must be true or false"},
      {R("\"normalizer\": null",
         "\"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Strip\", "
         "\"strip_left\": true, \"strip_right\": true}, {\"type\": \"Replace\", \"content\": "
         "\"x\", \"pattern\": {\"String\": \" \"}}, {\"type\": \"NFC\"}]}"),
       "NFC after Prepend or Replace is not supported"},
      {R("\"post_processor\": null", "\"post_processor\": {\"type\": \"Weird\"}"),
       "post_processor.type"},
      {R("{\"type\": \"ByteLevel\"", "{\"type\": \"Whitespace\""), "pre_tokenizer.type"},
      {R("{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": true}",
         "{\"type\": \"Metaspace\", \"replacement\": \"_\", \"prepend_scheme\": \"odd\"}"),
       "pre_tokenizer.prepend_scheme: 'odd' is not supported"},
      {R("{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": true}",
         "{\"type\": \"Metaspace\", \"replacement\": \"_\", \"add_prefix_space\": false}"),
       "pre_tokenizer.add_prefix_space: false does not match prepend_scheme 'always'"},
      {R("\"truncation\": null", "\"truncation\": {\"max_length\": 5}"), "truncation"},
      {R("\"hello\": 259", "\"hello\": 4294967296"), "must fit int32"},
      {R("\"special\": true", "\"special\": true, \"single_word\": true"),
       "added_tokens[0].single_word"},
  };
  for (const auto& c : cases) {
    auto t = ParseTokenizerJson(c.json, "dir/tokenizer.json", {});
    ASSERT_FALSE(t.ok()) << c.expect;
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(t.status().message().find("dir/tokenizer.json: "), std::string::npos)
        << t.status().message();
    EXPECT_NE(t.status().message().find(c.expect), std::string::npos) << t.status().message();
  }
}

TEST(TokenizerJsonTest, SplitStageBadRegexNamesTheField) {
  std::string j = Replace(
      SmallJson(), R"({"type": "ByteLevel", "add_prefix_space": false, "use_regex": true})",
      R"({"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "(x"},
               "behavior": "Isolated", "invert": false},
               {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]})");
  auto t = ParseTokenizerJson(j, "t.json", {});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("pre_tokenizer.pretokenizers[0].pattern.Regex"),
            std::string::npos)
      << t.status().message();
}

TEST(TokenizerJsonTest, InvalidUtf8IsRefused) {
  auto t = ParseTokenizerJson(SmallJson(), "small.json", {});
  ASSERT_TRUE(t.ok());
  std::vector<int32_t> ids;
  Status st = (*t)->Encode("ok\xff", &ids);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("byte 2"), std::string::npos);
}

}  // namespace
}  // namespace stoker
