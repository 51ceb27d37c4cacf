#include "chat/jinja_pystr.h"

#include <utf8proc.h>

#include <algorithm>
#include <iterator>

#include "chat/jinja_casing.h"
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

// Unicode's Cased: the letters of categories Lu, Ll and Lt (ﬁ has no one-letter upper case),
// and what has a case mapping.
bool IsCased(char32_t c) {
  const auto cat = utf8proc_category(c);
  return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL ||
         cat == UTF8PROC_CATEGORY_LT || utf8proc_toupper(c) != utf8proc_int32_t(c) ||
         utf8proc_tolower(c) != utf8proc_int32_t(c);
}

// Unicode's Case_Ignorable (marks, format characters, modifiers and the word-internal
// punctuation), for the final sigma.
bool IsCaseIgnorable(char32_t c) {
  switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_SK:
      return true;
    default:
      break;
  }
  static constexpr char32_t kPunct[] = {0x27,   0x2E,   0x3A,   0xB7,   0x387,  0x5F4,
                                        0x2018, 0x2019, 0x2024, 0x2027, 0xFE13, 0xFE52,
                                        0xFE55, 0xFF07, 0xFF0E, 0xFF1A};
  return std::find(std::begin(kPunct), std::end(kPunct), c) != std::end(kPunct);
}

// Python's lower() of u[i]: the full mapping, and capital sigma as final sigma at a word's end.
void AppendLower(const std::u32string& u, size_t i, std::u32string* out) {
  const char32_t c = u[i];
  if (c == 0x3A3) {
    size_t j = i;
    while (j > 0 && IsCaseIgnorable(u[j - 1])) --j;
    bool final_sigma = j > 0 && IsCased(u[j - 1]);
    if (final_sigma) {
      size_t k = i + 1;
      while (k < u.size() && IsCaseIgnorable(u[k])) ++k;
      final_sigma = k == u.size() || !IsCased(u[k]);
    }
    *out += final_sigma ? char32_t(0x3C2) : char32_t(0x3C3);
  } else if (const char* full = FullLower(c)) {
    *out += ToU32(full);
  } else {
    *out += char32_t(utf8proc_tolower(c));
  }
}

void AppendUpper(char32_t c, std::u32string* out) {
  const char* full = FullUpper(c);
  *out += full ? ToU32(full) : std::u32string(1, char32_t(utf8proc_toupper(c)));
}

void AppendTitle(char32_t c, std::u32string* out) {
  const char* full = FullTitle(c);
  *out += full ? ToU32(full) : std::u32string(1, char32_t(utf8proc_totitle(c)));
}

}  // namespace

std::string PyUpper(std::string_view s) {
  std::u32string out;
  for (char32_t c : ToU32(s)) AppendUpper(c, &out);
  return FromU32(out);
}

std::string PyLower(std::string_view s) {
  std::u32string u = ToU32(s), out;
  for (size_t i = 0; i < u.size(); ++i) AppendLower(u, i, &out);
  return FromU32(out);
}

std::string PyTitle(std::string_view s) {
  std::u32string u = ToU32(s), out;
  bool prev_cased = false;
  for (size_t i = 0; i < u.size(); ++i) {
    if (prev_cased) {
      AppendLower(u, i, &out);
    } else {
      AppendTitle(u[i], &out);
    }
    prev_cased = IsCased(u[i]);
  }
  return FromU32(out);
}

std::string PyCapitalize(std::string_view s) {
  std::u32string u = ToU32(s), out;
  for (size_t i = 0; i < u.size(); ++i) {
    if (i) {
      AppendLower(u, i, &out);
    } else {
      AppendTitle(u[i], &out);
    }
  }
  return FromU32(out);
}

bool PyIsAlpha(char32_t c) {
  switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
      return true;
    default:
      return false;
  }
}

bool PyIsDigit(char32_t c) {
  return utf8proc_category(c) == UTF8PROC_CATEGORY_ND || IsExtraDigit(c);
}

bool PyIsAlnum(char32_t c) {
  const auto cat = utf8proc_category(c);
  return PyIsAlpha(c) || cat == UTF8PROC_CATEGORY_ND || cat == UTF8PROC_CATEGORY_NL ||
         cat == UTF8PROC_CATEGORY_NO;
}

std::string JinjaTitle(std::string_view s) {
  // jinja2: re.split(r"([-\s({\[<]+)") and each piece's first character upper, the rest lower.
  std::u32string u = ToU32(s), out;
  auto is_sep = [](char32_t c) {
    return IsPySpace(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
  };
  bool start = true;
  for (size_t i = 0; i < u.size(); ++i) {
    if (is_sep(u[i])) {
      out += u[i];
      start = true;
      continue;
    }
    if (start) {
      AppendUpper(u[i], &out);
    } else {
      AppendLower(u, i, &out);
    }
    start = false;
  }
  return FromU32(out);
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
