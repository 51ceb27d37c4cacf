#include "text/utf8.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace stoker {
namespace {

constexpr size_t kNpos = std::string_view::npos;

TEST(Utf8Test, ValidTextHasNoInvalidOffset) {
  EXPECT_EQ(FindInvalidUtf8(""), kNpos);
  EXPECT_EQ(FindInvalidUtf8("plain ascii text that is longer than eight bytes"), kNpos);
  EXPECT_EQ(FindInvalidUtf8("床前明月光 Вол без рога \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF"), kNpos);
}

TEST(Utf8Test, FindsFirstInvalidByte) {
  EXPECT_EQ(FindInvalidUtf8("abc\xFF"), 3u);
  EXPECT_EQ(FindInvalidUtf8("abcdefghij\x80xyz"), 10u);  // lone continuation after ASCII run
  EXPECT_EQ(FindInvalidUtf8("\xC0\xAF"), 0u);            // overlong '/'
  EXPECT_EQ(FindInvalidUtf8("ok\xE0\x80\xAF"), 2u);      // overlong 3-byte
  EXPECT_EQ(FindInvalidUtf8("\xED\xA0\x80"), 0u);        // surrogate U+D800
  EXPECT_EQ(FindInvalidUtf8("\xF4\x90\x80\x80"), 0u);    // above U+10FFFF
  EXPECT_EQ(FindInvalidUtf8("\xE6\x98"), 0u);            // truncated at end of text
}

// Long text goes through simdjson's check first, and the byte loop only finds where when that
// check fails: it must call valid exactly what the loop (AppendReplacingInvalidUtf8 alone) calls
// valid, with each invalid sequence at each position of a long text.
TEST(Utf8Test, LongTextIsValidExactlyWhenTheByteLoopSaysSo) {
  const std::string valid = "plain, naïve café 数据 🙂 Вол \xF4\x8F\xBF\xBF end";
  const std::vector<std::string> bad = {"\xFF",         "\x80",         "\xC0\xAF",
                                        "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                                        "\xE6\x98",     "\xF0\x9F\x98"};
  for (int reps : {1, 3, 20}) {
    std::string text;
    for (int r = 0; r < reps; ++r) text += valid;
    EXPECT_EQ(FindInvalidUtf8(text), kNpos) << reps;
    for (const std::string& b : bad) {
      for (size_t at = 0; at <= text.size(); at += 5) {
        const std::string t = text.substr(0, at) + b + text.substr(at);
        std::string repaired;
        const bool loop_valid = AppendReplacingInvalidUtf8(t, &repaired) == 0;
        const size_t got = FindInvalidUtf8(t);
        EXPECT_EQ(got == kNpos, loop_valid) << at;
        if (got != kNpos) {  // the text before it is valid (`at` may fall inside a character)
          repaired.clear();
          EXPECT_EQ(AppendReplacingInvalidUtf8(t.substr(0, got), &repaired), 0u) << at;
        }
      }
    }
  }
}

TEST(Utf8Test, ReplacesEachMaximalSubpartOnce) {
  std::string out;
  // Truncated 3-byte sequence E6 98 then 'x': one replacement for both bytes.
  EXPECT_EQ(AppendReplacingInvalidUtf8("a\xE6\x98x", &out), 1u);
  EXPECT_EQ(out, "a\xEF\xBF\xBDx");
  out.clear();
  // Two lone continuation bytes are two maximal subparts.
  EXPECT_EQ(AppendReplacingInvalidUtf8("\x80\x80", &out), 2u);
  EXPECT_EQ(out, "\xEF\xBF\xBD\xEF\xBF\xBD");
  out.clear();
  // Surrogate ED A0 80: ED cannot be followed by A0, so ED, A0 and 80 are replaced separately.
  EXPECT_EQ(AppendReplacingInvalidUtf8("\xED\xA0\x80", &out), 3u);
  out.clear();
  EXPECT_EQ(AppendReplacingInvalidUtf8("valid 月", &out), 0u);
  EXPECT_EQ(out, "valid 月");
  EXPECT_EQ(FindInvalidUtf8(out), kNpos);
}

TEST(Utf8Test, AppendKeepsExistingContent) {
  std::string out = "prefix:";
  AppendReplacingInvalidUtf8("\xFF", &out);
  EXPECT_EQ(out, "prefix:\xEF\xBF\xBD");
}

TEST(Utf8Test, ParsesPolicies) {
  EXPECT_EQ(*ParseUtf8Policy("replace"), Utf8Policy::kReplace);
  EXPECT_EQ(*ParseUtf8Policy("skip"), Utf8Policy::kSkip);
  EXPECT_EQ(*ParseUtf8Policy("fail"), Utf8Policy::kFail);
  auto bad = ParseUtf8Policy("ignore");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("ignore"), std::string::npos);
  EXPECT_EQ(Utf8PolicyName(Utf8Policy::kSkip), "skip");
}

}  // namespace
}  // namespace stoker
