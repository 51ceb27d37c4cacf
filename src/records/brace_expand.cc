#include "records/brace_expand.h"

#include <cstdint>
#include <cstdio>
#include <optional>

namespace stoker {
namespace {

constexpr std::string_view kLetters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

struct Expander {
  std::string_view whole;
  size_t max_results;

  Status TooMany() const {
    return InvalidArgument("brace pattern '" + std::string(whole) + "' expands to more than " +
                           std::to_string(max_results) + " names");
  }

  // Index of the '}' closing the '{' at `open`, or npos.
  static size_t MatchingClose(std::string_view s, size_t open) {
    int depth = 0;
    for (size_t i = open; i < s.size(); ++i) {
      if (s[i] == '\\') {
        ++i;
      } else if (s[i] == '{') {
        ++depth;
      } else if (s[i] == '}' && --depth == 0) {
        return i;
      }
    }
    return std::string_view::npos;
  }

  // The pieces of `inner` between top-level commas.
  static std::vector<std::string_view> SplitCommas(std::string_view inner) {
    std::vector<std::string_view> pieces;
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i < inner.size(); ++i) {
      if (inner[i] == '\\') {
        ++i;
      } else if (inner[i] == '{') {
        ++depth;
      } else if (inner[i] == '}') {
        --depth;
      } else if (inner[i] == ',' && depth == 0) {
        pieces.push_back(inner.substr(start, i - start));
        start = i + 1;
      }
    }
    pieces.push_back(inner.substr(start));
    return pieces;
  }

  static bool ParseInt(std::string_view s, int64_t* v) {
    size_t i = s.size() > 1 && s[0] == '-' ? 1 : 0;
    if (i == s.size() || s.size() - i > 17) return false;
    int64_t x = 0;
    for (size_t k = i; k < s.size(); ++k) {
      if (s[k] < '0' || s[k] > '9') return false;
      x = x * 10 + (s[k] - '0');
    }
    *v = i ? -x : x;
    return true;
  }

  // The names of a range group "N..M[..S]" or "a..e[..S]", or nullopt if `inner` is not one.
  std::optional<Result<std::vector<std::string>>> Range(std::string_view inner) const {
    size_t dots = inner.find("..");
    if (dots == std::string_view::npos) return std::nullopt;
    std::string_view left = inner.substr(0, dots), rest = inner.substr(dots + 2);
    std::string_view right = rest, incr;
    if (size_t d2 = rest.find(".."); d2 != std::string_view::npos) {
      right = rest.substr(0, d2);
      incr = rest.substr(d2 + 2);
      if (!incr.empty() && incr[0] == '-') incr.remove_prefix(1);
    }
    int64_t step = 1;
    if (!incr.empty() && (!ParseInt(incr, &step) || step < 0)) return std::nullopt;
    if (step == 0) step = 1;
    std::vector<std::string> out;
    int64_t a, b;
    if (ParseInt(left, &a) && ParseInt(right, &b)) {
      auto padded = [](std::string_view s) {
        return s != "0" && s != "-0" && (s.starts_with("0") || s.starts_with("-0"));
      };
      int width = padded(left) || padded(right) ? static_cast<int>(std::max(left.size(), right.size())) : 0;
      uint64_t count = static_cast<uint64_t>((a < b ? b - a : a - b) / step) + 1;
      if (count > max_results) return Result<std::vector<std::string>>(TooMany());
      for (uint64_t k = 0; k < count; ++k) {
        int64_t v = a < b ? a + static_cast<int64_t>(k) * step : a - static_cast<int64_t>(k) * step;
        char buf[32];
        std::snprintf(buf, sizeof buf, "%0*lld", width, static_cast<long long>(v));
        out.emplace_back(buf);
      }
      return Result<std::vector<std::string>>(std::move(out));
    }
    if (left.size() == 1 && right.size() == 1 && kLetters.find(left[0]) != std::string_view::npos &&
        kLetters.find(right[0]) != std::string_view::npos) {
      int64_t i = static_cast<int64_t>(kLetters.find(left[0]));
      int64_t j = static_cast<int64_t>(kLetters.find(right[0]));
      for (int64_t k = i; i <= j ? k <= j : k >= j; k += i <= j ? step : -step) {
        out.emplace_back(1, kLetters[static_cast<size_t>(k)]);
      }
      return Result<std::vector<std::string>>(std::move(out));
    }
    return std::nullopt;
  }

  static std::string Unescape(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\\' && i + 1 < s.size()) ++i;
      out += s[i];
    }
    return out;
  }

  Result<std::vector<std::string>> Expand(std::string_view s) const {
    size_t open = std::string_view::npos;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\\') {
        ++i;
      } else if (s[i] == '{') {
        open = i;
        break;
      } else if (s[i] == '}') {
        return InvalidArgument("unbalanced '}' in brace pattern '" + std::string(whole) + "'");
      }
    }
    if (open == std::string_view::npos) return std::vector<std::string>{Unescape(s)};
    size_t close = MatchingClose(s, open);
    if (close == std::string_view::npos) {
      return InvalidArgument("unbalanced '{' in brace pattern '" + std::string(whole) + "'");
    }
    std::string prefix = Unescape(s.substr(0, open));
    std::string_view inner = s.substr(open + 1, close - open - 1);
    std::vector<std::string> items;
    if (auto range = Range(inner)) {
      if (!range->ok()) return range->status();
      items = std::move(range->value());
    } else if (std::vector<std::string_view> pieces = SplitCommas(inner); pieces.size() > 1) {
      for (std::string_view piece : pieces) {
        STOKER_ASSIGN_OR_RETURN(std::vector<std::string> sub, Expand(piece));
        if (items.size() + sub.size() > max_results) return TooMany();
        for (std::string& x : sub) items.push_back(std::move(x));
      }
    } else {
      STOKER_ASSIGN_OR_RETURN(std::vector<std::string> sub, Expand(inner));
      for (std::string& x : sub) items.push_back("{" + x + "}");
    }
    STOKER_ASSIGN_OR_RETURN(std::vector<std::string> tails, Expand(s.substr(close + 1)));
    if (items.size() * tails.size() > max_results) return TooMany();
    std::vector<std::string> out;
    out.reserve(items.size() * tails.size());
    for (const std::string& item : items) {
      for (const std::string& tail : tails) out.push_back(prefix + item + tail);
    }
    return out;
  }
};

}  // namespace

Result<std::vector<std::string>> ExpandBraces(std::string_view pattern, size_t max_results) {
  Expander e{pattern, max_results};
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t sep = pattern.find("::", start);
    std::string_view piece = pattern.substr(start, sep == std::string_view::npos ? sep : sep - start);
    STOKER_ASSIGN_OR_RETURN(std::vector<std::string> names, e.Expand(piece));
    if (out.size() + names.size() > max_results) return e.TooMany();
    for (std::string& n : names) out.push_back(std::move(n));
    if (sep == std::string_view::npos) break;
    start = sep + 2;
  }
  return out;
}

bool HasBracePattern(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '{') {
      return true;
    }
  }
  return false;
}

}  // namespace stoker
