#include "diag/html_parts.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <string>
#include <vector>

namespace stoker::diag {
namespace {

// A step is 1, 2, 2.5 or 5 times a power of ten.
bool IsRoundStep(double step) {
  const double mantissa = step / std::pow(10.0, std::floor(std::log10(step)));
  for (double m : {1.0, 2.0, 2.5, 5.0}) {
    if (std::fabs(mantissa - m) < 1e-9) return true;
  }
  return false;
}

TEST(RoundTicksTest, RoundStepsThatCoverTheMaximum) {
  // Values like the ones the reports plot: a stall share of 98.6%, 249 M tokens/s, 7.3 s.
  for (double max : {0.986, 1.084, 249e6, 7.3, 0.05, 1.32, 3.0e9, 12.0, 0.0031, 1e-7, 987654.0}) {
    SCOPED_TRACE(max);
    const AxisTicks t = RoundTicks(max);
    EXPECT_TRUE(IsRoundStep(t.step)) << t.step;
    EXPECT_GE(t.top, max);
    EXPECT_NEAR(t.top, t.step * t.count, 1e-9 * t.top);
    EXPECT_GE(t.count, 2);
    EXPECT_LE(t.count, 8);
    EXPECT_LT(t.top - max, t.step + 1e-9 * t.top);  // no empty step above the data
  }
}

TEST(RoundTicksTest, KnownCases) {
  AxisTicks t = RoundTicks(249e6);
  EXPECT_DOUBLE_EQ(t.step, 100e6);
  EXPECT_DOUBLE_EQ(t.top, 300e6);
  t = RoundTicks(1.084);
  EXPECT_DOUBLE_EQ(t.step, 0.5);
  EXPECT_DOUBLE_EQ(t.top, 1.5);
  t = RoundTicks(10, 5);
  EXPECT_DOUBLE_EQ(t.step, 2);
  EXPECT_EQ(t.count, 5);
  t = RoundTicks(0);  // nothing measured: still an axis
  EXPECT_DOUBLE_EQ(t.top, 1);
}

TEST(TickLabelTest, NoFloatNoise) {
  EXPECT_EQ(TickLabel(0.30000000000000004, 0.1), "0.3");
  EXPECT_EQ(TickLabel(7.5, 2.5), "7.5");
  EXPECT_EQ(TickLabel(100, 50), "100");
  EXPECT_EQ(TickLabel(0.05, 0.05), "0.05");
}

// Every tick label of a plot of awkward values is a round number.
TEST(RenderLinePlotTest, TickLabelsAreRound) {
  PlotSpec spec;
  spec.id = "p";
  spec.title = "t";
  PlotSeries s{{}, "#000"};
  for (int i = 0; i <= 20; ++i) s.points.emplace_back(0.37 * i, 249e6 * (0.9 + 0.005 * i));
  spec.series.push_back(s);
  const std::string svg = RenderLinePlot(spec);
  std::regex ytick(R"re(class="ytick"[^>]*>([^<]*)<)re"),
      xtick(R"re(class="xtick"[^>]*>([^<]*)<)re");
  std::vector<std::string> ys, xs;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), ytick); it != std::sregex_iterator();
       ++it) {
    ys.push_back((*it)[1]);
  }
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), xtick); it != std::sregex_iterator();
       ++it) {
    xs.push_back((*it)[1]);
  }
  EXPECT_EQ(ys, (std::vector<std::string>{"0", "100 M", "200 M", "300 M"}));
  EXPECT_EQ(xs, (std::vector<std::string>{"0 s", "2 s", "4 s", "6 s", "8 s"}));
}

TEST(RenderLinePlotTest, PercentAndRatioAxesAndARule) {
  PlotSpec spec;
  spec.id = "r";
  spec.title = "ratio";
  spec.y_format = AxisFormat::kRatio;
  spec.series.push_back({{{0, 0.9}, {1, 1.1}}, "#111"});
  spec.rules.push_back({1.2, "1.2x", "#555"});
  const std::string svg = RenderLinePlot(spec);
  EXPECT_NE(svg.find(">0.5x<"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">1.5x<"), std::string::npos) << svg;
  EXPECT_NE(svg.find("class=\"rule\""), std::string::npos);
  spec.y_format = AxisFormat::kPercent;
  spec.rules.clear();
  spec.series = {{{{0, 0.986}, {1, 0.5}}, "#111"}};
  const std::string pct = RenderLinePlot(spec);
  EXPECT_NE(pct.find(">100%<"), std::string::npos) << pct;
  EXPECT_EQ(pct.find("108.4%"), std::string::npos);
}

}  // namespace
}  // namespace stoker::diag
