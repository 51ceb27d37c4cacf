// PieceTrie against a brute-force prefix search over random keys, and its edge cases.
#include "text/piece_trie.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>

namespace stoker {
namespace {

std::vector<std::pair<size_t, int32_t>> Prefixes(const PieceTrie& t, std::string_view text) {
  std::vector<std::pair<size_t, int32_t>> out;
  t.ForEachPrefix(text, [&](size_t length, int32_t id) { out.emplace_back(length, id); });
  return out;
}

TEST(PieceTrieTest, FindsEveryPrefixShortestFirst) {
  std::vector<std::pair<std::string_view, int32_t>> keys = {
      {"a", 0}, {"ab", 1}, {"abc", 2}, {"b", 3}, {"\xE2\x96\x81", 4}, {"\xFF\x00z", 5}, {"a", 9}};
  keys[5].first = std::string_view("\xFF\x00z", 3);
  PieceTrie t = PieceTrie::Build(keys);
  using V = std::vector<std::pair<size_t, int32_t>>;
  EXPECT_EQ(Prefixes(t, "abcd"), (V{{1, 0}, {2, 1}, {3, 2}}));  // a repeated key keeps its first id
  EXPECT_EQ(Prefixes(t, "ac"), (V{{1, 0}}));
  EXPECT_EQ(Prefixes(t, "c"), V{});
  EXPECT_EQ(Prefixes(t, ""), V{});
  EXPECT_EQ(Prefixes(t, "\xE2\x96\x81x"), (V{{3, 4}}));
  EXPECT_EQ(Prefixes(t, std::string_view("\xFF\x00zz", 4)), (V{{3, 5}}));
  EXPECT_EQ(t.LongestPrefix("abx"), 2u);
  EXPECT_TRUE(PieceTrie().empty());
  EXPECT_EQ(Prefixes(PieceTrie(), "a"), V{});
  EXPECT_EQ(Prefixes(PieceTrie::Build({}), "a"), V{});
}

TEST(PieceTrieTest, AgreesWithBruteForceOnRandomKeys) {
  std::mt19937 rng(7);
  std::vector<std::string> strings;
  for (int i = 0; i < 5000; ++i) {
    std::string s(1 + rng() % 8, 'a');
    for (char& c : s) c = static_cast<char>(rng() % 3 == 0 ? rng() % 256 : 'a' + rng() % 4);
    strings.push_back(s);
  }
  std::vector<std::pair<std::string_view, int32_t>> keys;
  for (size_t i = 0; i < strings.size(); ++i)
    keys.emplace_back(strings[i], static_cast<int32_t>(i));
  PieceTrie t = PieceTrie::Build(keys);
  for (int q = 0; q < 2000; ++q) {
    const std::string& base = strings[rng() % strings.size()];
    std::string text = base + strings[rng() % strings.size()];
    std::vector<std::pair<size_t, int32_t>> want;
    for (size_t len = 1; len <= text.size(); ++len) {
      for (size_t i = 0; i < strings.size(); ++i) {
        if (strings[i] == std::string_view(text).substr(0, len)) {
          want.emplace_back(len, static_cast<int32_t>(i));
          break;
        }
      }
    }
    ASSERT_EQ(Prefixes(t, text), want) << q;
  }
}

// A vocabulary of Pegasus' size (96,103 pieces), Latin and CJK: every key is found with its id.
// (The build restarted each base search at the array's first hole, and took minutes here.)
TEST(PieceTrieTest, FindsEveryKeyOfALargeVocabulary) {
  std::mt19937 rng(96103);
  std::vector<std::string> strings;
  for (int i = 0; i < 96103; ++i) {
    std::string s = rng() % 2 ? "\xE2\x96\x81" : "";
    const size_t chars = 1 + rng() % 6;
    for (size_t k = 0; k < chars; ++k) {
      if (rng() % 4 == 0) {  // a CJK character, U+4E00..U+9FFF
        const uint32_t cp = 0x4E00 + rng() % 0x5200;
        s += static_cast<char>(0xE0 | (cp >> 12));
        s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        s += static_cast<char>(0x80 | (cp & 0x3F));
      } else {
        s += static_cast<char>('a' + rng() % 26);
      }
    }
    strings.push_back(s);
  }
  std::vector<std::pair<std::string_view, int32_t>> keys;
  for (size_t i = 0; i < strings.size(); ++i)
    keys.emplace_back(strings[i], static_cast<int32_t>(i));
  PieceTrie t = PieceTrie::Build(keys);
  std::unordered_map<std::string_view, int32_t> first;
  for (const auto& [key, id] : keys) first.emplace(key, id);
  for (const auto& [key, id] : first) {
    int32_t found = -1;
    t.ForEachPrefix(key, [&](size_t length, int32_t i) {
      if (length == key.size()) found = i;
    });
    ASSERT_EQ(found, id) << key;
  }
}

TEST(PieceTrieTest, HasKeyStartingWith) {
  std::vector<std::pair<std::string_view, int32_t>> keys = {
      {"ab", 0}, {"abcd", 1}, {"\xC3\xA9", 2}};
  PieceTrie t = PieceTrie::Build(keys);
  for (std::string_view p : {"a", "ab", "abc", "abcd", "\xC3"})
    EXPECT_TRUE(t.HasKeyStartingWith(p)) << p;
  for (std::string_view p : {"b", "abd", "abcde", "\xC4", "\t"}) {
    EXPECT_FALSE(t.HasKeyStartingWith(p)) << p;
  }
  EXPECT_FALSE(PieceTrie().HasKeyStartingWith("a"));
}

}  // namespace
}  // namespace stoker
