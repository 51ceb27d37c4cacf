// BpeModel::isolated and BpeTokenizer's cut around isolated characters (Llama 2's "\n", digits).
#include <gtest/gtest.h>

#include <random>

#include "text/bpe_model.h"
#include "text/bpe_tokenizer.h"

namespace stoker {
namespace {

// Character mode: a, b, "\n", "1", ab, ba, aba, bb, <unk>; "\n" and "1" are in no merge.
BpeModel SmallCharModel() {
  const std::vector<std::string> v = {"a", "b", "\n", "1", "ab", "ba", "aba", "bb", "<unk>"};
  Result<BpeModel> m = BpeModel::Build(v, {{0, 1, 0, 4}, {1, 0, 1, 5}, {4, 0, 2, 6}, {1, 1, 3, 7}});
  EXPECT_TRUE(m.ok());
  m->set_unk(8, /*fuse_unk=*/true);
  m->set_char_symbols({});
  return std::move(m).value();
}

TEST(IsolatedCharsTest, OnlyCharactersNoMergeHoldsAndThatAreNeverUnk) {
  BpeModel m = SmallCharModel();
  EXPECT_TRUE(m.has_isolated());
  EXPECT_TRUE(m.isolated('\n'));
  EXPECT_TRUE(m.isolated('1'));
  EXPECT_FALSE(m.isolated('a'));  // merged into ab
  EXPECT_FALSE(m.isolated('x'));  // no token and no fallback: unk, which fuses with its neighbours
  EXPECT_FALSE(m.isolated(0xC3));

  // "2" only through byte fallback while another byte has none (so unk is possible): a cut
  // there would split an unk run ("x2x" is one unk and the bytes of 2), so it is not isolated.
  std::vector<std::string> v = {"a", "<unk>", "<0x32>"};
  Result<BpeModel> partial = BpeModel::Build(v, {});
  ASSERT_TRUE(partial.ok());
  partial->set_unk(1, true);
  std::vector<int32_t> fallback(256, -1);
  fallback['2'] = 2;
  partial->set_char_symbols(fallback);
  EXPECT_FALSE(partial->isolated('2'));
  EXPECT_TRUE(partial->isolated('a'));  // its own token, merged with nothing

  // Every byte has a fallback token: no character is ever unk, so "2" is isolated too.
  std::vector<std::string> full = {"a"};
  std::vector<int32_t> all(256);
  for (int b = 0; b < 256; ++b) {
    all[static_cast<size_t>(b)] = static_cast<int32_t>(full.size());
    full.push_back("<0x" + std::to_string(b) + ">");
  }
  Result<BpeModel> complete = BpeModel::Build(full, {});
  ASSERT_TRUE(complete.ok());
  complete->set_char_symbols(all);
  EXPECT_TRUE(complete->isolated('2'));

  // Byte mode (tiktoken, byte-level BPE): never.
  Result<BpeModel> bytes = BpeModel::Build({"a", "\n"}, {});
  ASSERT_TRUE(bytes.ok());
  EXPECT_FALSE(bytes->has_isolated());
}

// The tokenizer cuts around "\n" and "1" (and caches the parts); its ids must be those of the
// whole piece merged at once, for short pieces, long ones (the heap) and unk runs.
TEST(IsolatedCharsTest, CutGivesTheIdsOfTheWholePiece) {
  BpeTokenizer::Config c;
  c.model = SmallCharModel();
  c.vocab_size = c.model.size();
  const BpeModel reference = SmallCharModel();
  BpeTokenizer t(std::move(c));
  std::mt19937 rng(7);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string s;
    for (int k = 0, n = 1 + static_cast<int>(rng() % 90); k < n; ++k) s += "aab\n1x"[rng() % 6];
    std::vector<int32_t> want, got;
    reference.EncodePiece(s, &want);
    ASSERT_TRUE(t.Encode(s, &got).ok());
    ASSERT_EQ(got, want) << s;
    got.clear();
    ASSERT_TRUE(t.Encode(s, &got).ok());  // again: now from the caches
    ASSERT_EQ(got, want) << s;
  }
}

}  // namespace
}  // namespace stoker
