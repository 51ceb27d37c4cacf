#include "common/progress.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace stoker {
namespace {

// Captures what the reporter writes.
class Capture {
 public:
  Capture() : f_(std::tmpfile()) {}
  ~Capture() { std::fclose(f_); }
  std::FILE* file() { return f_; }
  std::string Text() {
    std::fflush(f_);
    std::rewind(f_);
    std::string s;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f_)) > 0) s.append(buf, n);
    return s;
  }

 private:
  std::FILE* f_;
};

TEST(ProgressTest, FormatCount) {
  EXPECT_EQ(FormatCount(0), "0");
  EXPECT_EQ(FormatCount(999), "999");
  EXPECT_EQ(FormatCount(1234567), "1,234,567");
}

TEST(ProgressTest, RenderBarShowsFractionRateAndEta) {
  ProgressReporter::Snapshot s{.items = 25,
                               .bytes = 250000000,
                               .total_items = 100,
                               .total_bytes = 1000000000,
                               .elapsed_s = 2.0};
  EXPECT_EQ(ProgressReporter::RenderBar("verify", "documents", s, 8),
            "verify [##......]  25%  25/100 documents  125.0 MB/s  ETA 0:06");
  s.total_bytes = 0;
  s.total_items = 0;
  EXPECT_EQ(ProgressReporter::RenderPlain("pack", "documents", s),
            "pack: 25 documents, 238 MiB, 125.0 MB/s, ETA ?");
}

TEST(ProgressTest, PlainModePrintsPeriodicLinesAndOneSummary) {
  Capture cap;
  double now = 100.0;
  ProgressReporter p({.label = "verify",
                      .item_name = "shards",
                      .total_items = 4,
                      .mode = ProgressReporter::Mode::kPlain,
                      .out = cap.file(),
                      .plain_interval_s = 5.0,
                      .clock = [&] { return now; }});
  p.Add(1, 1000);  // before the interval: silent
  now = 106.0;
  p.Add(1, 1000);  // after it: one line
  now = 108.0;
  p.Finish();
  p.Finish();
  EXPECT_EQ(cap.Text(),
            "verify: 2/4 shards, 1.95 KiB, 333.3 B/s, ETA 0:06\n"
            "verify: done: 2 shards, 1.95 KiB in 0:08 (250.0 B/s)\n");
}

TEST(ProgressTest, TerminalModeRedrawsInPlaceAndEndsWithNewline) {
  Capture cap;
  double now = 0;
  ProgressReporter p({.label = "pack",
                      .total_items = 2,
                      .mode = ProgressReporter::Mode::kTerminal,
                      .out = cap.file(),
                      .clock = [&] { return now; }});
  now = 1;
  p.Add(1, 10);
  p.Finish(false);
  std::string text = cap.Text();
  EXPECT_EQ(text.find("\rpack [###############...............]  50%"), 0u) << text;
  EXPECT_NE(text.find("\r\033[Kpack: failed after 1 items"), std::string::npos) << text;
  EXPECT_EQ(text.back(), '\n');
}

TEST(ProgressTest, CountsAndDrawsFromManyThreads) {
  Capture cap;
  // Interval 0: every Add tries to draw, so drawing races are exercised (run under TSan too).
  ProgressReporter p({.label = "t",
                      .total_items = 40000,
                      .mode = ProgressReporter::Mode::kPlain,
                      .out = cap.file(),
                      .plain_interval_s = 0});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) p.Add(1, 3);
    });
  }
  for (auto& t : threads) t.join();
  p.Finish();
  EXPECT_EQ(p.snapshot().items, 8000u);
  EXPECT_EQ(p.snapshot().bytes, 24000u);
  std::string text = cap.Text();
  EXPECT_NE(text.find("t: done: 8,000 items"), std::string::npos);
  // Every line is whole: drawing is serialized.
  size_t lines = 0;
  for (size_t pos = 0; (pos = text.find('\n', pos)) != std::string::npos; ++pos) ++lines;
  EXPECT_GE(lines, 2u);
  EXPECT_EQ(text.find("t: t:"), std::string::npos);
}

}  // namespace
}  // namespace stoker
