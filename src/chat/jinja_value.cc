#include "chat/jinja_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "text/utf8.h"

namespace stoker::jinja {

constinit thread_local ReadWatch* ReadWatch::current_ = nullptr;

bool HasSpanMarker(std::string_view s) {
  // U+E000..U+E003 are EE 80 80..83 in UTF-8: memchr jumps between the 0xEE bytes.
  for (size_t i = s.find('\xee'); i != std::string::npos && i + 2 < s.size();
       i = s.find('\xee', i + 1)) {
    if (static_cast<unsigned char>(s[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(s[i + 2]) & 0xfc) == 0x80) {
      return true;
    }
  }
  return false;
}

void ReadWatch::Check(const std::string& s) {
  if (HasSpanMarker(s)) seen_ = true;
}

const Value* Dict::Find(std::string_view key) const {
  for (const auto& [k, v] : items) {
    if (k == key) return &v;
  }
  return nullptr;
}

void Dict::Set(const std::string& key, Value v) {
  for (auto& [k, old] : items) {
    if (k == key) {
      old = std::move(v);
      return;
    }
  }
  items.emplace_back(key, std::move(v));
}

Value Value::None() { return Value(Kind::kNone); }
Value Value::Bool(bool b) {
  Value v(Kind::kBool);
  v.b_ = b;
  return v;
}
Value Value::Int(int64_t i) {
  Value v(Kind::kInt);
  v.i_ = i;
  return v;
}
Value Value::BigInt(uint64_t u) {
  if (u <= uint64_t(INT64_MAX)) return Int(int64_t(u));
  Value v(Kind::kBigInt);
  v.i_ = int64_t(u);
  return v;
}
Value Value::Float(double f) {
  Value v(Kind::kFloat);
  v.f_ = f;
  return v;
}
Value Value::String(std::string s) {
  Value v(Kind::kString);
  v.s_ = std::move(s);
  return v;
}
Value Value::List(ValueList items, bool tuple) {
  Value v(Kind::kList);
  v.tuple_ = tuple;
  for (const Value& item : items) v.nesting_ = std::max(v.nesting_, item.nesting_ + 1);
  v.list_ = std::make_shared<ValueList>(std::move(items));
  return v;
}
Value Value::MakeDict(Dict d, bool is_namespace) {
  Value v(Kind::kDict);
  v.namespace_ = is_namespace;
  for (const auto& kv : d.items) v.nesting_ = std::max(v.nesting_, kv.second.nesting_ + 1);
  v.dict_ = std::make_shared<Dict>(std::move(d));
  return v;
}
Value Value::Func(std::string name, Function f) {
  Value v(Kind::kFunction);
  v.s_ = std::move(name);
  v.fn_ = std::make_shared<Function>(std::move(f));
  return v;
}

Value Value::FromJson(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return None();
    case nlohmann::ordered_json::value_t::boolean:
      return Bool(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Int(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned:
      return BigInt(j.get<uint64_t>());
    case nlohmann::ordered_json::value_t::number_float:
      return Float(j.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return String(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      ValueList items;
      items.reserve(j.size());
      for (const auto& e : j) items.push_back(FromJson(e));
      return List(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Dict d;
      d.items.reserve(j.size());
      for (auto it = j.begin(); it != j.end(); ++it) d.items.emplace_back(it.key(), FromJson(*it));
      return MakeDict(std::move(d));
    }
    default:
      return None();
  }
}

bool Value::Truthy() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return b_;
    case Kind::kInt:
      return i_ != 0;
    case Kind::kBigInt:
      return true;
    case Kind::kFloat:
      return f_ != 0;
    case Kind::kString:
      return !s_.empty();
    case Kind::kList:
      return !list_->empty();
    case Kind::kDict:
      return namespace_ || !dict_->items.empty();
    case Kind::kFunction:
      return true;
  }
  return false;
}

std::string FloatRepr(double f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  if (f == 0) return std::signbit(f) ? "-0.0" : "0.0";
  // The shortest digits that read back, then Python's layout: fixed for 1e-4 <= |f| < 1e16.
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  size_t e = sci.find('e');
  int exp = std::atoi(sci.c_str() + e + 1);
  std::string digits;
  for (size_t i = 0; i < e; ++i) {
    if (sci[i] != '.') digits += sci[i];
  }
  std::string out = neg ? "-" : "";
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out += "0." + std::string(-exp - 1, '0') + digits;
    } else if (size_t(exp) + 1 >= digits.size()) {
      out += digits + std::string(exp + 1 - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, exp + 1) + "." + digits.substr(exp + 1);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char eb[16];
  std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
  return out + eb;
}

namespace {

std::string PyStrRepr(const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos;
  bool has_double = s.find('"') != std::string::npos;
  char q = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, q);
  for (char32_t cp : ToU32(s)) {
    if (cp == char32_t(q) || cp == '\\') {
      out += '\\';
      out += char(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0)) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", unsigned(cp));
      out += b;
    } else {
      AppendUtf8(cp, &out);
    }
  }
  out += q;
  return out;
}

void AppendJsonString(const std::string& s, bool ensure_ascii, std::string* out) {
  // The short escapes: kShortFrom[k] is written as a backslash and kShortTo[k].
  static constexpr std::string_view kShortFrom = "\"\\\n\r\t\b\f";
  static constexpr std::string_view kShortTo = "\"\\nrtbf";
  *out += '"';
  for (char32_t cp : ToU32(s)) {
    size_t k = cp < 0x80 ? kShortFrom.find(char(cp)) : std::string_view::npos;
    if (k != std::string_view::npos) {
      *out += '\\';
      *out += kShortTo[k];
      continue;
    }
    char b[16];
    if (cp < 0x20 || (ensure_ascii && cp > 0x7e)) {
      if (cp > 0xffff) {
        char32_t v = cp - 0x10000;
        std::snprintf(b, sizeof b, "\\u%04x\\u%04x", unsigned(0xd800 + (v >> 10)),
                      unsigned(0xdc00 + (v & 0x3ff)));
      } else {
        std::snprintf(b, sizeof b, "\\u%04x", unsigned(cp));
      }
      *out += b;
    } else {
      AppendUtf8(cp, out);
    }
  }
  *out += '"';
}

// A list or dict whose Repr is under way on this thread, for its scope; meeting one again, Repr
// prints what Python prints for a container that holds itself: "[...]", "(...)", "{...}".
class ReprOpen {
 public:
  explicit ReprOpen(const void* container) : container_(container), outer_(innermost_) {
    innermost_ = this;
  }
  ~ReprOpen() { innermost_ = outer_; }
  ReprOpen(const ReprOpen&) = delete;
  ReprOpen& operator=(const ReprOpen&) = delete;

  static bool Has(const void* container) {
    for (const ReprOpen* o = innermost_; o != nullptr; o = o->outer_) {
      if (o->container_ == container) return true;
    }
    return false;
  }

 private:
  static constinit thread_local ReprOpen* innermost_;
  const void* container_;
  ReprOpen* outer_;
};

constinit thread_local ReprOpen* ReprOpen::innermost_ = nullptr;

}  // namespace

std::string Value::Str() const {
  switch (kind_) {
    case Kind::kUndefined:
      return "";
    case Kind::kString:
      return str();
    default:
      return Repr();
  }
}

std::string Value::Repr() const {
  switch (kind_) {
    case Kind::kUndefined:
      return "Undefined";
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return b_ ? "True" : "False";
    case Kind::kInt:
      return std::to_string(i_);
    case Kind::kBigInt:
      return std::to_string(uint64_t(i_));
    case Kind::kFloat:
      return FloatRepr(f_);
    case Kind::kString:
      return PyStrRepr(str());
    case Kind::kList: {
      if (ReprOpen::Has(list_.get())) return tuple_ ? "(...)" : "[...]";
      ReprOpen open(list_.get());
      std::string out = tuple_ ? "(" : "[";
      for (size_t i = 0; i < list_->size(); ++i) {
        if (i) out += ", ";
        out += (*list_)[i].Repr();
      }
      if (tuple_ && list_->size() == 1) out += ",";
      return out + (tuple_ ? ")" : "]");
    }
    case Kind::kDict: {
      if (ReprOpen::Has(dict_.get())) return namespace_ ? "<Namespace {...}>" : "{...}";
      ReprOpen open(dict_.get());
      std::string out = namespace_ ? "<Namespace {" : "{";
      bool first = true;
      for (const auto& [k, v] : dict_->items) {
        if (!first) out += ", ";
        first = false;
        out += PyStrRepr(k) + ": " + v.Repr();
      }
      return out + (namespace_ ? "}>" : "}");
    }
    case Kind::kFunction:
      return "<function " + s_ + ">";
  }
  return "";
}

int64_t Value::Length() const {
  switch (kind_) {
    case Kind::kUndefined:
      return 0;
    case Kind::kString: {
      int64_t n = 0;
      for (unsigned char c : str()) n += (c & 0xc0) != 0x80;
      return n;
    }
    case Kind::kList:
      return int64_t(list_->size());
    case Kind::kDict:
      return int64_t(dict_->items.size());
    default:
      return -1;
  }
}

const char* Value::TypeName() const {
  switch (kind_) {
    case Kind::kUndefined:
      return "Undefined";
    case Kind::kNone:
      return "NoneType";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
    case Kind::kBigInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return "str";
    case Kind::kList:
      return tuple_ ? "tuple" : "list";
    case Kind::kDict:
      return namespace_ ? "Namespace" : "dict";
    case Kind::kFunction:
      return "function";
  }
  return "?";
}

Status Value::AppendJson(std::string* out, bool ensure_ascii, const std::string* indent,
                         const std::string& item_sep, const std::string& key_sep, bool sort_keys,
                         int depth) const {
  auto newline = [&](int d) {
    *out += '\n';
    for (int i = 0; i < d; ++i) *out += *indent;
    return CheckBuildSize(out->size());
  };
  switch (kind_) {
    case Kind::kNone:
      *out += "null";
      return Status::OK();
    case Kind::kBool:
      *out += b_ ? "true" : "false";
      return Status::OK();
    case Kind::kInt:
      *out += std::to_string(i_);
      return Status::OK();
    case Kind::kBigInt:
      *out += std::to_string(uint64_t(i_));
      return Status::OK();
    case Kind::kFloat:
      if (std::isnan(f_)) {
        *out += "NaN";
      } else if (std::isinf(f_)) {
        *out += f_ > 0 ? "Infinity" : "-Infinity";
      } else {
        *out += FloatRepr(f_);
      }
      return Status::OK();
    case Kind::kString:
      AppendJsonString(str(), ensure_ascii, out);
      return Status::OK();
    case Kind::kList:
    case Kind::kDict: {
      // A list writes its items; a dict its (possibly sorted) keys, each before its value.
      bool list = kind_ == Kind::kList;
      if (namespace_) return InvalidArgument("Object of type Namespace is not JSON serializable");
      size_t n = list ? list_->size() : dict_->items.size();
      if (n == 0) {
        *out += list ? "[]" : "{}";
        return Status::OK();
      }
      std::vector<const std::pair<std::string, Value>*> items;
      if (!list) {
        for (const auto& kv : dict_->items) items.push_back(&kv);
      }
      if (sort_keys) {
        std::stable_sort(items.begin(), items.end(),
                         [](auto* a, auto* b) { return ToU32(a->first) < ToU32(b->first); });
      }
      *out += list ? '[' : '{';
      for (size_t i = 0; i < n; ++i) {
        if (i) *out += item_sep;
        if (indent) STOKER_RETURN_IF_ERROR(newline(depth + 1));
        if (!list) {
          AppendJsonString(items[i]->first, ensure_ascii, out);
          *out += key_sep;
        }
        const Value& v = list ? (*list_)[i] : items[i]->second;
        STOKER_RETURN_IF_ERROR(
            v.AppendJson(out, ensure_ascii, indent, item_sep, key_sep, sort_keys, depth + 1));
      }
      if (indent) STOKER_RETURN_IF_ERROR(newline(depth));
      *out += list ? ']' : '}';
      return Status::OK();
    }
    default:
      return InvalidArgument(std::string("Object of type ") + TypeName() +
                             " is not JSON serializable");
  }
}

Status CheckBuildSize(uint64_t n) {
  if (n <= kMaxValueSize) return Status::OK();
  return InvalidArgument("the template builds a value of more than " +
                         std::to_string(kMaxValueSize) +
                         " bytes or items (stoker's bound on one rendering)");
}

Status CheckValueSize(const Value& v) {
  if (v.is_string()) return CheckBuildSize(v.whole_str().size());
  if (v.nesting() > kMaxNesting) {
    return InvalidArgument("the template nests lists and dicts more than " +
                           std::to_string(kMaxNesting) + " deep (stoker's bound on one rendering)");
  }
  if (v.is_list()) return CheckBuildSize(v.list().size());
  return Status::OK();
}

namespace {

// A big int (past int64) against a number: -1, 0 or 1.
int CompareBig(const Value& a, const Value& b) {
  if (a.is_big_int() && b.is_big_int()) {
    return a.big_int_value() < b.big_int_value() ? -1 : a.big_int_value() > b.big_int_value();
  }
  if (a.is_big_int() && b.kind() == Value::Kind::kFloat) {
    double x = double(a.big_int_value()), y = b.float_value();
    return x < y ? -1 : x > y;
  }
  if (a.is_big_int()) return 1;  // past every int64
  return -CompareBig(b, a);
}

}  // namespace

bool Equal(const Value& a, const Value& b) {
  using K = Value::Kind;
  if ((a.is_big_int() || b.is_big_int()) && (a.is_number() || a.is_big_int()) &&
      (b.is_number() || b.is_big_int())) {
    return CompareBig(a, b) == 0;
  }
  if (a.is_number() && b.is_number()) {
    if (a.kind() == K::kFloat || b.kind() == K::kFloat) return a.float_value() == b.float_value();
    return a.int_value() == b.int_value();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case K::kUndefined:
    case K::kNone:
      return true;
    case K::kString:
      return a.str() == b.str();
    case K::kList: {
      if (a.is_tuple() != b.is_tuple() || a.list().size() != b.list().size()) return false;
      for (size_t i = 0; i < a.list().size(); ++i) {
        if (!Equal(a.list()[i], b.list()[i])) return false;
      }
      return true;
    }
    case K::kDict: {
      if (a.is_namespace() || b.is_namespace()) return &a.dict() == &b.dict();
      if (a.dict().items.size() != b.dict().items.size()) return false;
      for (const auto& [k, v] : a.dict().items) {
        const Value* o = b.dict().Find(k);
        if (!o || !Equal(v, *o)) return false;
      }
      return true;
    }
    case K::kFunction:
      return &a.function() == &b.function();
    default:
      return false;
  }
}

Result<int> Compare(const Value& a, const Value& b) {
  if ((a.is_big_int() || b.is_big_int()) && (a.is_number() || a.is_big_int()) &&
      (b.is_number() || b.is_big_int())) {
    return CompareBig(a, b);
  }
  if (a.is_number() && b.is_number()) {
    if (a.kind() == Value::Kind::kFloat || b.kind() == Value::Kind::kFloat) {
      double x = a.float_value(), y = b.float_value();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    int64_t x = a.int_value(), y = b.int_value();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) {
    int c = a.str().compare(b.str());  // UTF-8 byte order is code point order
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
    size_t n = std::min(a.list().size(), b.list().size());
    for (size_t i = 0; i < n; ++i) {
      if (Equal(a.list()[i], b.list()[i])) continue;
      return Compare(a.list()[i], b.list()[i]);
    }
    return a.list().size() < b.list().size() ? -1 : (a.list().size() > b.list().size() ? 1 : 0);
  }
  return InvalidArgument(std::string("cannot compare ") + a.TypeName() + " with " + b.TypeName());
}

bool IsPySpace(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

std::u32string ToU32(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    char32_t cp;
    int n;
    if (c < 0x80) {
      cp = c, n = 1;
    } else if (c >> 5 == 6) {
      cp = c & 0x1f, n = 2;
    } else if (c >> 4 == 14) {
      cp = c & 0x0f, n = 3;
    } else {
      cp = c & 0x07, n = 4;
    }
    for (int k = 1; k < n && i + k < s.size(); ++k) cp = (cp << 6) | (s[i + k] & 0x3f);
    out += cp;
    i += n;
  }
  return out;
}

std::string FromU32(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t cp : s) AppendUtf8(cp, &out);
  return out;
}

}  // namespace stoker::jinja
