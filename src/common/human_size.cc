#include "common/human_size.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

namespace stoker {
namespace {

std::string Lower(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != ' ') out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

}  // namespace

Result<uint64_t> ParseSize(std::string_view text) {
  auto bad = [&](const char* why) {
    return InvalidArgument("invalid size '" + std::string(text) + "': " + why +
                           " (examples: 4096, 64KiB, 128MiB, 1.5GiB, 100MB)");
  };
  size_t i = 0;
  while (i < text.size() && text[i] == ' ') ++i;
  size_t num_start = i;
  bool seen_dot = false;
  while (i < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[i])) || (text[i] == '.' && !seen_dot))) {
    seen_dot |= text[i] == '.';
    ++i;
  }
  std::string number(text.substr(num_start, i - num_start));
  if (number.empty() || number == ".") return bad("no number");
  std::string unit = Lower(text.substr(i));
  long double mult = 0;
  static const struct {
    const char* names[4];
    long double mult;
  } kUnits[] = {
      {{"", "b", nullptr, nullptr}, 1.0L},
      {{"k", "ki", "kib", nullptr}, 1024.0L},
      {{"m", "mi", "mib", nullptr}, 1024.0L * 1024},
      {{"g", "gi", "gib", nullptr}, 1024.0L * 1024 * 1024},
      {{"t", "ti", "tib", nullptr}, 1024.0L * 1024 * 1024 * 1024},
      {{"kb", nullptr, nullptr, nullptr}, 1e3L},
      {{"mb", nullptr, nullptr, nullptr}, 1e6L},
      {{"gb", nullptr, nullptr, nullptr}, 1e9L},
      {{"tb", nullptr, nullptr, nullptr}, 1e12L},
  };
  for (const auto& u : kUnits) {
    for (const char* name : u.names) {
      if (name != nullptr && unit == name) mult = u.mult;
    }
  }
  if (mult == 0) return bad("unknown unit");
  long double value = std::stold(number) * mult;
  if (value >= 18446744073709551615.0L) return bad("too large");
  if (value != std::floor(value)) return bad("not a whole number of bytes");
  return static_cast<uint64_t>(value);
}

std::string FormatSize(uint64_t size_bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (size_bytes < 1024) return std::to_string(size_bytes) + " B";
  double v = static_cast<double>(size_bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf),
                v < 10    ? "%.2f %s"
                : v < 100 ? "%.1f %s"
                          : "%.0f %s",
                v, kUnits[u]);
  return buf;
}

std::string FormatRate(double bytes_per_s) {
  static const char* kUnits[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s"};
  int u = 0;
  while (bytes_per_s >= 1000 && u < 4) {
    bytes_per_s /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %s", bytes_per_s, kUnits[u]);
  return buf;
}

std::string FormatDuration(double seconds) {
  if (!(seconds >= 0) || seconds > 1e9) return "?";
  uint64_t s = static_cast<uint64_t>(std::llround(seconds));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof(buf), "%llu:%02llu:%02llu", static_cast<unsigned long long>(s / 3600),
                  static_cast<unsigned long long>(s / 60 % 60),
                  static_cast<unsigned long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof(buf), "%llu:%02llu", static_cast<unsigned long long>(s / 60),
                  static_cast<unsigned long long>(s % 60));
  }
  return buf;
}

}  // namespace stoker
