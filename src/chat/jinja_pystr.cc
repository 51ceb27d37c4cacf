#include "chat/jinja_pystr.h"

#include <utf8proc.h>

#include <algorithm>

#include "chat/jinja_value.h"

namespace stoker::jinja {

std::string PyStrip(std::string_view s, const std::optional<std::string>& chars, bool left,
                    bool right) {
  std::u32string u = ToU32(s);
  std::u32string set = chars ? ToU32(*chars) : std::u32string();
  auto strip = [&](char32_t c) {
    return chars ? set.find(c) != std::u32string::npos : IsPySpace(c);
  };
  size_t b = 0, e = u.size();
  if (left) {
    while (b < e && strip(u[b])) ++b;
  }
  if (right) {
    while (e > b && strip(u[e - 1])) --e;
  }
  return FromU32(std::u32string_view(u).substr(b, e - b));
}

std::vector<std::string> PySplit(std::string_view s, const std::optional<std::string>& sep,
                                 long maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t pos = 0;
    while (maxsplit < 0 || long(out.size()) < maxsplit) {
      size_t q = s.find(*sep, pos);
      if (q == std::string_view::npos) break;
      out.emplace_back(s.substr(pos, q - pos));
      pos = q + sep->size();
    }
    out.emplace_back(s.substr(pos));
    return out;
  }
  std::u32string u = ToU32(s);
  size_t i = 0;
  while (true) {
    while (i < u.size() && IsPySpace(u[i])) ++i;
    if (i == u.size()) break;
    if (maxsplit >= 0 && long(out.size()) == maxsplit) {
      size_t e = u.size();
      while (e > i && IsPySpace(u[e - 1])) --e;
      out.push_back(FromU32(std::u32string_view(u).substr(i, e - i)));
      break;
    }
    size_t j = i;
    while (j < u.size() && !IsPySpace(u[j])) ++j;
    out.push_back(FromU32(std::u32string_view(u).substr(i, j - i)));
    i = j;
  }
  return out;
}

std::vector<std::string> PyRSplit(std::string_view s, const std::optional<std::string>& sep,
                                  long maxsplit) {
  if (!sep || maxsplit < 0) return PySplit(s, sep, maxsplit);
  std::vector<std::string> out;
  size_t end = s.size();
  while (long(out.size()) < maxsplit) {
    size_t q = end >= sep->size() ? s.rfind(*sep, end - sep->size()) : std::string_view::npos;
    if (q == std::string_view::npos) break;
    out.emplace_back(s.substr(q + sep->size(), end - q - sep->size()));
    end = q;
  }
  out.emplace_back(s.substr(0, end));
  std::reverse(out.begin(), out.end());
  return out;
}

std::string PyReplace(std::string_view s, std::string_view old, std::string_view repl, long count) {
  std::string out;
  if (old.empty()) {
    // Python inserts `repl` before every code point and at the end.
    std::u32string u = ToU32(s);
    long n = 0;
    for (char32_t c : u) {
      if (count < 0 || n < count) {
        out += repl;
        ++n;
      }
      out += FromU32(std::u32string(1, c));
    }
    if (count < 0 || n < count) out += repl;
    return out;
  }
  size_t pos = 0;
  long n = 0;
  while (count < 0 || n < count) {
    size_t q = s.find(old, pos);
    if (q == std::string_view::npos) break;
    out.append(s.substr(pos, q - pos));
    out.append(repl);
    pos = q + old.size();
    ++n;
  }
  out.append(s.substr(pos));
  return out;
}

namespace {

bool IsCased(char32_t c) {
  return utf8proc_toupper(c) != utf8proc_int32_t(c) || utf8proc_tolower(c) != utf8proc_int32_t(c) ||
         utf8proc_category(c) == UTF8PROC_CATEGORY_LT;
}

}  // namespace

std::string PyUpper(std::string_view s) {
  std::u32string u = ToU32(s);
  for (char32_t& c : u) c = utf8proc_toupper(c);
  return FromU32(u);
}

std::string PyLower(std::string_view s) {
  std::u32string u = ToU32(s);
  for (char32_t& c : u) c = utf8proc_tolower(c);
  return FromU32(u);
}

std::string PyTitle(std::string_view s) {
  std::u32string u = ToU32(s);
  bool prev_cased = false;
  for (char32_t& c : u) {
    bool cased = IsCased(c);
    c = prev_cased ? utf8proc_tolower(c) : utf8proc_totitle(c);
    prev_cased = cased;
  }
  return FromU32(u);
}

std::string PyCapitalize(std::string_view s) {
  std::u32string u = ToU32(s);
  for (size_t i = 0; i < u.size(); ++i) u[i] = i ? utf8proc_tolower(u[i]) : utf8proc_totitle(u[i]);
  return FromU32(u);
}

std::string JinjaTitle(std::string_view s) {
  // jinja2: re.split(r"([-\s({\[<]+)") and each piece's first character upper, the rest lower.
  std::u32string u = ToU32(s);
  auto is_sep = [](char32_t c) {
    return IsPySpace(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
  };
  bool start = true;
  for (char32_t& c : u) {
    if (is_sep(c)) {
      start = true;
      continue;
    }
    c = start ? utf8proc_toupper(c) : utf8proc_tolower(c);
    start = false;
  }
  return FromU32(u);
}

std::vector<std::string> PySplitLines(std::string_view s) {
  std::u32string u = ToU32(s);
  std::vector<std::string> out;
  size_t b = 0;
  for (size_t i = 0; i < u.size(); ++i) {
    char32_t c = u[i];
    bool brk = c == '\n' || c == '\r' || c == 0x0b || c == 0x0c || c == 0x1c || c == 0x1d ||
               c == 0x1e || c == 0x85 || c == 0x2028 || c == 0x2029;
    if (!brk) continue;
    out.push_back(FromU32(std::u32string_view(u).substr(b, i - b)));
    if (c == '\r' && i + 1 < u.size() && u[i + 1] == '\n') ++i;
    b = i + 1;
  }
  if (b < u.size()) out.push_back(FromU32(std::u32string_view(u).substr(b)));
  return out;
}

}  // namespace stoker::jinja
