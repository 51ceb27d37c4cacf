#include "chat/jinja_lexer.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "chat/jinja_value.h"
#include "text/utf8.h"

namespace stoker::jinja {
namespace {

bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsIdent(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Length in bytes of the Python whitespace character at s[i], or 0.
size_t SpaceAt(std::string_view s, size_t i) {
  unsigned char c = s[i];
  if (c < 0x80) return IsPySpace(c) ? 1 : 0;
  size_t n = c >> 5 == 6 ? 2 : (c >> 4 == 14 ? 3 : 4);
  if (i + n > s.size()) return 0;
  std::u32string cp = ToU32(s.substr(i, n));
  return cp.size() == 1 && IsPySpace(cp[0]) ? n : 0;
}

std::string RStripSpace(std::string_view s) {
  std::u32string u = ToU32(s);
  while (!u.empty() && IsPySpace(u.back())) u.pop_back();
  return FromU32(u);
}

bool AllSpace(std::string_view s) { return !s.empty() && std::ranges::all_of(ToU32(s), IsPySpace); }

// Python's "unicode-escape" decoding of a string literal's body, as jinja2 applies it.
std::string Unescape(std::string_view body) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\' || i + 1 == body.size()) {
      out += c;
      continue;
    }
    char e = body[++i];
    auto hex = [&](int n) -> bool {
      if (i + n >= body.size()) return false;
      std::string h(body.substr(i + 1, n));
      if (h.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) return false;
      AppendUtf8(char32_t(std::strtoul(h.c_str(), nullptr, 16)), &out);
      i += n;
      return true;
    };
    // The one-character escapes: kEscapeFrom[k] stands for kEscapeTo[k].
    static constexpr std::string_view kEscapeFrom = "\\'\"abfnrtv";
    static constexpr std::string_view kEscapeTo = "\\'\"\a\b\f\n\r\t\v";
    if (size_t k = kEscapeFrom.find(e); k != std::string_view::npos) {
      out += kEscapeTo[k];
      continue;
    }
    switch (e) {
      case '\n':
        break;
      case 'x':
        if (!hex(2)) out += "\\x";
        break;
      case 'u':
        if (!hex(4)) out += "\\u";
        break;
      case 'U':
        if (!hex(8)) out += "\\U";
        break;
      default:
        if (e >= '0' && e <= '7') {
          int v = e - '0';
          for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7';
               ++k) {
            v = v * 8 + (body[++i] - '0');
          }
          AppendUtf8(char32_t(v), &out);
        } else {
          out += '\\';
          out += e;
        }
    }
  }
  return out;
}

class Lexer {
 public:
  Lexer(std::string src, const std::string& name) : s_(std::move(src)), name_(name) {}

  Result<std::vector<Chunk>> Run() {
    size_t pos = 0;
    bool line_starting = true;
    while (pos < s_.size()) {
      size_t open = FindOpener(pos);
      std::string text = s_.substr(pos, open - pos);
      int text_line = line_;
      CountLines(pos, open);
      if (open == s_.size()) {
        Emit(std::move(text), text_line);
        break;
      }
      char kind = s_[open + 1];
      char sign = open + 2 < s_.size() ? s_[open + 2] : 0;
      if (sign != '-' && sign != '+') sign = 0;
      if (sign == '-') {
        text = RStripSpace(text);
      } else if (sign != '+' && kind != '{') {
        size_t l_pos = text.rfind('\n');
        l_pos = l_pos == std::string::npos ? 0 : l_pos + 1;
        if ((l_pos > 0 || line_starting) && AllSpace(std::string_view(text).substr(l_pos))) {
          text.resize(l_pos);
        }
      }
      Emit(std::move(text), text_line);
      size_t p = open + 2 + (sign ? 1 : 0);
      size_t end;
      if (kind == '#') {
        STOKER_ASSIGN_OR_RETURN(end, CommentEnd(p));
      } else {
        STOKER_ASSIGN_OR_RETURN(end, Tag(kind, open, p));
      }
      line_starting = end > 0 && s_[end - 1] == '\n';
      pos = end;
    }
    return std::move(chunks_);
  }

 private:
  Status Error(const std::string& what, int line) const {
    return InvalidArgument("chat template " + name_ + " line " + std::to_string(line) + ": " +
                           what);
  }

  size_t FindOpener(size_t pos) const {
    for (size_t i = pos; i + 1 < s_.size(); ++i) {
      if (s_[i] == '{' && (s_[i + 1] == '{' || s_[i + 1] == '%' || s_[i + 1] == '#')) return i;
    }
    return s_.size();
  }

  void CountLines(size_t from, size_t to) {
    for (size_t i = from; i < to && i < s_.size(); ++i) line_ += s_[i] == '\n';
  }

  void Emit(std::string text, int line) {
    if (text.empty()) return;
    if (!chunks_.empty() && chunks_.back().kind == Chunk::Kind::kText) {
      chunks_.back().text += text;
      return;
    }
    chunks_.push_back(Chunk{Chunk::Kind::kText, std::move(text), {}, line});
  }

  // After a closer ending at `end`: `-` eats all following whitespace, trim_blocks one newline.
  size_t AfterCloser(size_t end, char sign, bool block) {
    if (sign == '-') {
      while (end < s_.size() && SpaceAt(s_, end)) end += SpaceAt(s_, end);
    } else if (sign != '+' && block && end < s_.size() && s_[end] == '\n') {
      ++end;
    }
    return end;
  }

  Result<size_t> CommentEnd(size_t p) {
    int line = line_;
    size_t q = s_.find("#}", p);
    if (q == std::string::npos) return Error("unclosed comment", line);
    char sign = q > p && (s_[q - 1] == '-' || s_[q - 1] == '+') ? s_[q - 1] : 0;
    CountLines(p, q + 2);
    size_t end = AfterCloser(q + 2, sign, true);
    CountLines(q + 2, end);
    return end;
  }

  Result<size_t> Tag(char kind, size_t open, size_t p) {
    Chunk chunk{kind == '{' ? Chunk::Kind::kOutput : Chunk::Kind::kStatement, "", {}, line_};
    const char closer = kind == '{' ? '}' : '%';
    int depth = 0;
    while (true) {
      while (p < s_.size()) {
        size_t n = SpaceAt(s_, p);
        if (!n) break;
        line_ += s_[p] == '\n';
        p += n;
      }
      if (p >= s_.size()) return Error("unclosed tag", chunk.line);
      char sign = s_[p] == '-' || s_[p] == '+' ? s_[p] : 0;
      size_t c = p + (sign ? 1 : 0);
      if (depth == 0 && c + 1 < s_.size() && s_[c] == closer && s_[c + 1] == '}' &&
          !(sign == '+' && kind == '{')) {
        size_t end = AfterCloser(c + 2, sign, kind == '%');
        CountLines(c + 2, end);
        if (kind == '%' && chunk.tokens.size() == 1 && chunk.tokens[0].text == "raw" &&
            chunk.tokens[0].type == Token::Type::kName) {
          return Raw(end, chunk.line);
        }
        chunks_.push_back(std::move(chunk));
        return end;
      }
      STOKER_ASSIGN_OR_RETURN(Token t, Next(&p));
      if (t.type == Token::Type::kOp) {
        if (t.text == "(" || t.text == "[" || t.text == "{") ++depth;
        if ((t.text == ")" || t.text == "]" || t.text == "}") && depth > 0) --depth;
      }
      chunk.tokens.push_back(std::move(t));
    }
  }

  // {% raw %}...{% endraw %}: the text between is literal.
  Result<size_t> Raw(size_t p, int line) {
    for (size_t q = s_.find("{%", p); q != std::string::npos; q = s_.find("{%", q + 2)) {
      size_t r = q + 2;
      char sign = s_[r] == '-' || s_[r] == '+' ? s_[r] : 0;
      if (sign) ++r;
      while (r < s_.size() && SpaceAt(s_, r)) r += SpaceAt(s_, r);
      if (s_.compare(r, 6, "endraw") != 0) continue;
      r += 6;
      while (r < s_.size() && SpaceAt(s_, r)) r += SpaceAt(s_, r);
      char esign = s_[r] == '-' ? '-' : 0;
      if (esign) ++r;
      if (s_.compare(r, 2, "%}") != 0) continue;
      std::string text = s_.substr(p, q - p);
      if (sign == '-') text = RStripSpace(text);
      Emit(std::move(text), line);
      size_t end = AfterCloser(r + 2, esign, true);
      CountLines(p, end);
      return end;
    }
    return Error("{% raw %} without {% endraw %}", line);
  }

  Result<Token> Next(size_t* pp) {
    size_t p = *pp;
    Token t;
    t.line = line_;
    char c = s_[p];
    if (c == '\'' || c == '"') {
      size_t q = p + 1;
      while (q < s_.size() && s_[q] != c) {
        if (s_[q] == '\\') ++q;
        ++q;
      }
      if (q >= s_.size()) return Error("unclosed string literal", line_);
      t.type = Token::Type::kString;
      t.text = Unescape(std::string_view(s_).substr(p + 1, q - p - 1));
      CountLines(p, q);
      *pp = q + 1;
      return t;
    }
    if (IsDigit(c)) {
      size_t q = p;
      auto digits = [&] {
        while (q < s_.size() &&
               (IsDigit(s_[q]) || (s_[q] == '_' && q + 1 < s_.size() && IsDigit(s_[q + 1])))) {
          ++q;
        }
      };
      digits();
      bool is_float = false;
      if (q + 1 < s_.size() && s_[q] == '.' && IsDigit(s_[q + 1])) {
        ++q;
        digits();
        is_float = true;
      }
      if (q < s_.size() && (s_[q] == 'e' || s_[q] == 'E')) {
        size_t r = q + 1;
        if (r < s_.size() && (s_[r] == '+' || s_[r] == '-')) ++r;
        if (r < s_.size() && IsDigit(s_[r])) {
          q = r;
          digits();
          is_float = true;
        }
      }
      std::string num = s_.substr(p, q - p);
      std::erase(num, '_');
      t.text = num;
      if (is_float) {
        t.type = Token::Type::kFloat;
        t.float_value = std::strtod(num.c_str(), nullptr);
      } else {
        t.type = Token::Type::kInt;
        errno = 0;
        t.int_value = std::strtoll(num.c_str(), nullptr, 10);
        if (errno == ERANGE) {
          return Error("the integer " + num + " does not fit in 64 bits", line_);
        }
      }
      *pp = q;
      return t;
    }
    if (IsIdentStart(c)) {
      size_t q = p;
      while (q < s_.size() && IsIdent(s_[q])) ++q;
      t.type = Token::Type::kName;
      t.text = s_.substr(p, q - p);
      *pp = q;
      return t;
    }
    static const char* kTwo[] = {"//", "**", "==", "!=", "<=", ">="};
    for (const char* op : kTwo) {
      if (s_.compare(p, 2, op) == 0) {
        t.type = Token::Type::kOp;
        t.text = op;
        *pp = p + 2;
        return t;
      }
    }
    if (std::string_view("+-*/%~<>=.,:|()[]{}").find(c) != std::string_view::npos) {
      t.type = Token::Type::kOp;
      t.text = std::string(1, c);
      *pp = p + 1;
      return t;
    }
    return Error(std::string("unexpected character '") + c + "' in a tag", line_);
  }

  std::string s_;
  const std::string& name_;
  int line_ = 1;
  std::vector<Chunk> chunks_;
};

}  // namespace

Result<std::vector<Chunk>> Lex(std::string_view source, const std::string& template_name) {
  std::string s;
  s.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      s += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      s += source[i];
    }
  }
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return Lexer(std::move(s), template_name).Run();
}

}  // namespace stoker::jinja
