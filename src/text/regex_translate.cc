#include "text/regex_translate.h"

#include <cctype>
#include <vector>

namespace stoker {
namespace {

// Length of the escape at p[i] == '\\' (whole \p{..}, \x{..}, \Q..\E, or the escaped character).
size_t EscapeLength(std::string_view p, size_t i) {
  if (i + 1 >= p.size()) return 1;
  char e = p[i + 1];
  if (e == 'Q') {
    size_t stop = p.find("\\E", i + 2);
    return (stop == std::string_view::npos ? p.size() : stop + 2) - i;
  }
  if ((e == 'p' || e == 'P' || e == 'x' || e == 'o' || e == 'N') && i + 2 < p.size() &&
      p[i + 2] == '{') {
    size_t stop = p.find('}', i + 3);
    return (stop == std::string_view::npos ? p.size() : stop + 1) - i;
  }
  if ((e == 'p' || e == 'P') && i + 2 < p.size()) return 3;  // \pL
  size_t len = 2;
  unsigned char c = static_cast<unsigned char>(e);
  if (c >= 0xC0) len += c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;  // an escaped non-ASCII character
  return std::min(len, p.size() - i);
}

std::string Escape(std::string_view esc, bool in_class) {
  if (esc == "\\s") return in_class ? "\\s\\x{85}" : "[\\s\\x{85}]";
  if (esc == "\\S" && !in_class) return "[^\\s\\x{85}]";
  return std::string(esc);
}

// The length of a valid interval {n}, {n,}, {n,m} or {,m} at p[i] == '{', or 0.
size_t IntervalLength(std::string_view p, size_t i) {
  size_t j = i + 1, digits = 0;
  while (j < p.size() && std::isdigit(static_cast<unsigned char>(p[j]))) ++j, ++digits;
  if (j < p.size() && p[j] == ',') {
    ++j;
    while (j < p.size() && std::isdigit(static_cast<unsigned char>(p[j]))) ++j, ++digits;
  }
  return digits > 0 && j < p.size() && p[j] == '}' ? j + 1 - i : 0;
}

// Copies the character class at p[i] == '[' to *out (translating escapes); returns its length.
size_t CopyClass(std::string_view p, size_t i, std::string* out) {
  size_t j = i + 1;
  int depth = 1;
  out->push_back('[');
  if (j < p.size() && p[j] == '^') out->push_back(p[j++]);
  if (j < p.size() && p[j] == ']') out->push_back(p[j++]);  // a leading ']' is literal
  while (j < p.size() && depth > 0) {
    char c = p[j];
    if (c == '\\') {
      size_t n = EscapeLength(p, j);
      *out += Escape(p.substr(j, n), true);
      j += n;
    } else if (c == '[' && j + 1 < p.size() && p[j + 1] == ':') {
      size_t stop = p.find(":]", j + 2);
      size_t to = stop == std::string_view::npos ? p.size() : stop + 2;
      out->append(p.substr(j, to - j));
      j = to;
    } else {
      if (c == '[') ++depth;
      if (c == ']') --depth;
      out->push_back(c);
      ++j;
    }
  }
  return j - i;
}

}  // namespace

std::string TranslateToPcre2(std::string_view p, bool oniguruma) {
  constexpr size_t kNone = std::string::npos;
  std::string out;
  out.reserve(p.size() + 32);
  size_t atom = kNone;  // where the last complete atom starts in `out`
  std::vector<size_t> groups;
  for (size_t i = 0; i < p.size();) {
    char c = p[i];
    size_t start = out.size();
    if (c == '\\') {
      size_t n = EscapeLength(p, i);
      out += Escape(p.substr(i, n), false);
      i += n;
      atom = start;
    } else if (c == '[') {
      i += CopyClass(p, i, &out);
      atom = start;
    } else if (c == '(') {
      groups.push_back(start);
      out.push_back(c);
      ++i;
      atom = kNone;
    } else if (c == ')') {
      out.push_back(c);
      ++i;
      atom = groups.empty() ? kNone : groups.back();
      if (!groups.empty()) groups.pop_back();
    } else if (c == '{' && IntervalLength(p, i) > 0) {
      size_t n = IntervalLength(p, i);
      out.append(p.substr(i, n));
      i += n;
      if (oniguruma && atom != kNone && i < p.size() && p[i] == '+') {
        out = out.substr(0, atom) + "(?:" + out.substr(atom) + ")";
      }
      atom = kNone;
    } else if (c == '*' || c == '+' || c == '?' || c == '|') {
      out.push_back(c);
      ++i;
      atom = kNone;
    } else {
      unsigned char u = static_cast<unsigned char>(c);
      size_t n = u >= 0xF0 ? 4 : u >= 0xE0 ? 3 : u >= 0xC0 ? 2 : 1;
      n = std::min(n, p.size() - i);
      out.append(p.substr(i, n));
      i += n;
      atom = start;
    }
  }
  return out;
}

}  // namespace stoker
