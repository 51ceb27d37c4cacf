#include "number_flags.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace stoker::cli {
namespace {

std::string Got(const std::string& text) { return ", got '" + text + "'"; }

// "1e+06" reads worse than "1000000"; keep short decimals for the bounds in messages.
std::string FormatBound(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.10g", x);
  return buf;
}

}  // namespace

CLI::Validator WholeNumber(uint64_t min, uint64_t max) {
  // --help shows the lower bound; the message for a bad value also shows the type's upper one.
  const std::string shown = "whole number ≥ " + std::to_string(min);
  std::string want = "a " + shown;
  if (max != std::numeric_limits<uint64_t>::max()) want += " and ≤ " + std::to_string(max);
  return CLI::Validator(
      [min, max, want](std::string& text) -> std::string {
        uint64_t x = 0;
        const char* end = text.data() + text.size();
        // from_chars takes digits only: no sign, no spaces, no "0x", no exponent.
        auto [ptr, ec] = std::from_chars(text.data(), end, x);
        const bool parsed = !text.empty() && ptr == end && ec == std::errc();
        if (parsed && x >= min && x <= max) return "";
        return "must be " + want + Got(text);
      },
      shown);
}

CLI::Validator RealNumber(double min, Bound min_bound, double max) {
  std::string want =
      std::string("a number ") + (min_bound == Bound::kExclusive ? "> " : "≥ ") + FormatBound(min);
  if (std::isfinite(max)) want += " and ≤ " + FormatBound(max);
  return CLI::Validator(
      [min, min_bound, max, want](std::string& text) -> std::string {
        char* end = nullptr;
        const double x = text.empty() ? 0 : std::strtod(text.c_str(), &end);
        const bool parsed = !text.empty() && !std::isspace(static_cast<unsigned char>(text[0])) &&
                            *end == '\0' && std::isfinite(x);
        const bool above = min_bound == Bound::kExclusive ? x > min : x >= min;
        if (parsed && above && x <= max) return "";
        return "must be " + want + Got(text);
      },
      want.substr(2));
}

}  // namespace stoker::cli
