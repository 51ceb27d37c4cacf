// Attribute and item access, methods, iteration and arithmetic (jinja_builtins.h). The filters
// and tests are in jinja_filters.cc.
#include "chat/jinja_builtins.h"

#include <algorithm>
#include <cmath>

#include "chat/jinja_pystr.h"

namespace stoker::jinja {
namespace {

Status UndefinedError(const std::string& what) {
  return InvalidArgument("'" + what + "' is undefined");
}

// Python's index normalisation: -1 is the last item; nullopt when out of range.
std::optional<size_t> Index(int64_t i, size_t n) {
  if (i < 0) i += int64_t(n);
  if (i < 0 || i >= int64_t(n)) return std::nullopt;
  return size_t(i);
}

std::optional<std::string> OptStr(const ValueList& args, size_t i) {
  if (i < args.size() && args[i].is_string()) return args[i].str();
  return std::nullopt;
}

Result<Value> StringList(std::vector<std::string> parts) {
  ValueList out;
  for (auto& p : parts) out.push_back(Value::String(std::move(p)));
  return Value::List(std::move(out));
}

bool StartsOrEnds(const std::string& s, const Value& affix, bool starts) {
  auto one = [&](const std::string& a) { return starts ? s.starts_with(a) : s.ends_with(a); };
  if (affix.is_list()) {
    for (const Value& a : affix.list()) {
      if (a.is_string() && one(a.str())) return true;
    }
    return false;
  }
  return affix.is_string() && one(affix.str());
}

std::optional<Result<Value>> StringMethod(const std::string& s, const std::string& name,
                                          const ValueList& args) {
  auto int_arg = [&](size_t i, long def) {
    return i < args.size() && args[i].is_number() ? long(args[i].int_value()) : def;
  };
  auto need_str = [&](size_t i) -> Status {
    if (i >= args.size() || !args[i].is_string()) {
      return InvalidArgument("str." + name + "() needs a string argument");
    }
    return Status::OK();
  };
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    return Value::String(PyStrip(s, OptStr(args, 0), name != "rstrip", name != "lstrip"));
  }
  if (name == "split" || name == "rsplit") {
    std::optional<std::string> sep = OptStr(args, 0);
    if (sep && sep->empty()) return InvalidArgument("empty separator");
    return StringList(name == "split" ? PySplit(s, sep, int_arg(1, -1))
                                      : PyRSplit(s, sep, int_arg(1, -1)));
  }
  if (name == "splitlines") return StringList(PySplitLines(s));
  if (name == "startswith" || name == "endswith") {
    if (args.empty()) return InvalidArgument("str." + name + "() needs an argument");
    return Value::Bool(StartsOrEnds(s, args[0], name == "startswith"));
  }
  if (name == "replace") {
    if (Status st = need_str(0); !st.ok()) return st;
    if (Status st = need_str(1); !st.ok()) return st;
    return Value::String(PyReplace(s, args[0].str(), args[1].str(), int_arg(2, -1)));
  }
  if (name == "upper") return Value::String(PyUpper(s));
  if (name == "lower") return Value::String(PyLower(s));
  if (name == "title") return Value::String(PyTitle(s));
  if (name == "capitalize") return Value::String(PyCapitalize(s));
  if (name == "find" || name == "rfind" || name == "count") {
    if (Status st = need_str(0); !st.ok()) return st;
    const std::string& sub = args[0].str();
    if (name == "count") {
      int64_t n = Value::String(s).Length() + 1;
      if (!sub.empty()) {
        n = 0;
        for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) ++n;
      }
      return Value::Int(n);
    }
    size_t p = name == "find" ? s.find(sub) : s.rfind(sub);
    if (p == std::string::npos) return Value::Int(-1);
    return Value::Int(Value::String(s.substr(0, p)).Length());
  }
  if (name == "join") {
    if (args.empty() || !args[0].is_list()) return InvalidArgument("str.join() needs a list");
    std::string out;
    for (size_t i = 0; i < args[0].list().size(); ++i) {
      if (i) out += s;
      const Value& v = args[0].list()[i];
      if (!v.is_string()) return InvalidArgument("str.join() needs a list of strings");
      out += v.str();
    }
    return Value::String(out);
  }
  if (name == "isdigit" || name == "isspace" || name == "isalpha" || name == "isalnum") {
    std::u32string u = ToU32(s);
    bool ok = !u.empty();
    for (char32_t c : u) {
      if (name == "isdigit") ok &= PyIsDigit(c);
      if (name == "isspace") ok &= IsPySpace(c);
      if (name == "isalpha") ok &= PyIsAlpha(c);
      if (name == "isalnum") ok &= PyIsAlnum(c);
    }
    return Value::Bool(ok);
  }
  return std::nullopt;
}

}  // namespace

Result<Value> GetAttr(const Value& obj, const std::string& name) {
  if (obj.is_undefined()) return UndefinedError(name + "' of an undefined value, so '" + name);
  if (obj.is_dict()) {
    if (const Value* v = obj.dict().Find(name)) return *v;
  }
  if (IsMethod(obj, name)) {
    return InvalidArgument("the method " + name + " is read without being called");
  }
  return Value();
}

Result<Value> GetItem(const Value& obj, const Value& key) {
  if (obj.is_undefined()) return UndefinedError("an item of an undefined value");
  if (obj.is_dict()) {
    if (!key.is_string()) return Value();
    const Value* v = obj.dict().Find(key.str());
    return v ? *v : Value();
  }
  if (obj.is_list() && key.is_number() && key.kind() != Value::Kind::kFloat) {
    auto i = Index(key.int_value(), obj.list().size());
    return i ? obj.list()[*i] : Value();
  }
  if (obj.is_string() && key.is_number() && key.kind() != Value::Kind::kFloat) {
    std::u32string u = ToU32(obj.str());
    auto i = Index(key.int_value(), u.size());
    return i ? Value::String(FromU32(u.substr(*i, 1))) : Value();
  }
  if (key.is_string()) return GetAttr(obj, key.str());
  return Value();
}

Result<Value> GetSlice(const Value& obj, const Value& start, const Value& stop, const Value& step) {
  if (obj.is_undefined()) return UndefinedError("a slice of an undefined value");
  auto given = [](const Value& v) { return !v.is_undefined() && !v.is_none(); };
  // jinja2's getitem: whatever Python refuses to slice reads as Undefined.
  for (const Value* v : {&start, &stop, &step}) {
    if (given(*v) && !(v->is_number() && v->kind() != Value::Kind::kFloat)) return Value();
  }
  int64_t st = given(step) ? step.int_value() : 1;
  if (st == 0) return InvalidArgument("slice step cannot be zero");
  std::u32string u;
  int64_t n;
  if (obj.is_string()) {
    u = ToU32(obj.str());
    n = int64_t(u.size());
  } else if (obj.is_list()) {
    n = int64_t(obj.list().size());
  } else {
    return Value();
  }
  // Python's PySlice_AdjustIndices.
  auto adjust = [&](const Value& v, int64_t def_pos, int64_t def_neg) {
    if (!given(v)) return st > 0 ? def_pos : def_neg;
    int64_t i = v.int_value();
    if (i < 0) {
      i += n;
      if (i < 0) i = st < 0 ? -1 : 0;
    } else if (i >= n) {
      i = st < 0 ? n - 1 : n;
    }
    return i;
  };
  int64_t b = adjust(start, 0, n - 1);
  int64_t e = adjust(stop, n, -1);
  std::vector<int64_t> idx;
  for (int64_t i = b; st > 0 ? i < e : i > e; i += st) idx.push_back(i);
  if (obj.is_string()) {
    std::u32string out;
    for (int64_t i : idx) out += u[size_t(i)];
    return Value::String(FromU32(out));
  }
  ValueList out;
  for (int64_t i : idx) out.push_back(obj.list()[size_t(i)]);
  return Value::List(std::move(out), obj.is_tuple());
}

bool IsMethod(const Value& obj, std::string_view name) {
  static const char* kStr[] = {"strip",      "lstrip",   "rstrip",  "split", "rsplit", "splitlines",
                               "startswith", "endswith", "replace", "upper", "lower",  "title",
                               "capitalize", "find",     "rfind",   "count", "join",   "isdigit",
                               "isspace",    "isalpha",  "isalnum"};
  static const char* kDict[] = {"items", "keys", "values", "get"};
  if (obj.is_string()) return std::find(std::begin(kStr), std::end(kStr), name) != std::end(kStr);
  if (!obj.is_dict() || obj.is_namespace()) return false;
  return std::find(std::begin(kDict), std::end(kDict), name) != std::end(kDict);
}

std::optional<Result<Value>> CallMethod(const Value& obj, const std::string& name,
                                        const ValueList& args, const Kwargs& kwargs) {
  if (!IsMethod(obj, name)) return std::nullopt;
  if (!kwargs.empty()) {
    return Result<Value>(InvalidArgument("keyword arguments to ." + name + "() are not supported"));
  }
  if (obj.is_string()) return StringMethod(obj.str(), name, args);
  const Dict& d = obj.dict();
  if (name == "get") {
    if (args.empty() || !args[0].is_string()) return Result<Value>(Value::None());
    const Value* v = d.Find(args[0].str());
    return Result<Value>(v ? *v : (args.size() > 1 ? args[1] : Value::None()));
  }
  ValueList out;
  for (const auto& [k, v] : d.items) {
    if (name == "items") out.push_back(Value::List({Value::String(k), v}, true));
    if (name == "keys") out.push_back(Value::String(k));
    if (name == "values") out.push_back(v);
  }
  return Result<Value>(Value::List(std::move(out)));
}

Result<ValueList> Iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      return ValueList{};
    case Value::Kind::kList:
      return v.list();
    case Value::Kind::kDict: {
      if (v.is_namespace()) break;
      ValueList keys;
      for (const auto& kv : v.dict().items) keys.push_back(Value::String(kv.first));
      return keys;
    }
    case Value::Kind::kString: {
      ValueList chars;
      for (char32_t c : ToU32(v.str()))
        chars.push_back(Value::String(FromU32(std::u32string(1, c))));
      return chars;
    }
    default:
      break;
  }
  return InvalidArgument(std::string("'") + v.TypeName() + "' object is not iterable");
}

namespace {

Status Overflow(const std::string& op) {
  return InvalidArgument("integer overflow in " + op +
                         ": the result does not fit in 64 bits (stoker's chat renderer computes "
                         "with 64-bit integers)");
}

// Python's + - * ** // % on two ints; a result past int64 is an error, never a wrapped number.
Result<Value> IntArithmetic(const std::string& op, int64_t x, int64_t y) {
  int64_t r = 0;
  if (op == "+")
    return __builtin_add_overflow(x, y, &r) ? Result<Value>(Overflow(op)) : Value::Int(r);
  if (op == "-")
    return __builtin_sub_overflow(x, y, &r) ? Result<Value>(Overflow(op)) : Value::Int(r);
  if (op == "*")
    return __builtin_mul_overflow(x, y, &r) ? Result<Value>(Overflow(op)) : Value::Int(r);
  if (op == "**") {
    if (y < 0) return Value::Float(std::pow(double(x), double(y)));
    // By squaring: 2 ** 10**18 fails at once, 1 ** 10**18 is 1.
    int64_t base = x;
    r = 1;
    for (int64_t e = y; e > 0; e >>= 1) {
      if ((e & 1) && __builtin_mul_overflow(r, base, &r)) return Overflow(op);
      if (e > 1 && __builtin_mul_overflow(base, base, &base)) return Overflow(op);
    }
    return Value::Int(r);
  }
  if (op != "//" && op != "%") {
    return InvalidArgument("unsupported operand type(s) for " + op + ": 'int' and 'int'");
  }
  if (y == 0) return InvalidArgument("integer division or modulo by zero");
  if (y == -1) {  // INT64_MIN / -1 traps: x // -1 is -x, x % -1 is 0
    if (op == "%") return Value::Int(0);
    return __builtin_sub_overflow(int64_t(0), x, &r) ? Result<Value>(Overflow(op)) : Value::Int(r);
  }
  int64_t q = x / y;
  if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
  return op == "//" ? Value::Int(q) : Value::Int(x - q * y);
}

}  // namespace

Result<Value> Arithmetic(const std::string& op, const Value& a, const Value& b) {
  auto type_error = [&] {
    return InvalidArgument("unsupported operand type(s) for " + op + ": '" + a.TypeName() +
                           "' and '" + b.TypeName() + "'");
  };
  if (a.is_undefined() || b.is_undefined()) {
    return InvalidArgument("an undefined value in an arithmetic expression (" + op + ")");
  }
  if ((a.is_big_int() && (b.is_number() || b.is_big_int())) || (b.is_big_int() && a.is_number())) {
    return Overflow(op);
  }
  if (a.is_number() && b.is_number()) {
    bool fl = a.kind() == Value::Kind::kFloat || b.kind() == Value::Kind::kFloat;
    if (op == "/") {
      if (b.float_value() == 0) return InvalidArgument("division by zero");
      return Value::Float(a.float_value() / b.float_value());
    }
    if (fl) {
      double x = a.float_value(), y = b.float_value();
      if (op == "+") return Value::Float(x + y);
      if (op == "-") return Value::Float(x - y);
      if (op == "*") return Value::Float(x * y);
      if (op == "**") return Value::Float(std::pow(x, y));
      if (y == 0) return InvalidArgument("float division by zero");
      if (op == "//") return Value::Float(std::floor(x / y));
      if (op == "%") {
        double m = std::fmod(x, y);
        if (m != 0 && ((m < 0) != (y < 0))) m += y;
        return Value::Float(m);
      }
      return type_error();
    }
    return IntArithmetic(op, a.int_value(), b.int_value());
  }
  if (op == "+" && a.is_string() && b.is_string()) {
    STOKER_RETURN_IF_ERROR(CheckBuildSize(uint64_t(a.whole_str().size()) + b.whole_str().size()));
    return Value::String(a.whole_str() + b.whole_str());  // not a read (ReadWatch)
  }
  if (op == "+" && a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
    STOKER_RETURN_IF_ERROR(CheckBuildSize(uint64_t(a.list().size()) + b.list().size()));
    ValueList out = a.list();
    out.insert(out.end(), b.list().begin(), b.list().end());
    return Value::List(std::move(out), a.is_tuple());
  }
  if (op == "*" && (a.is_string() || a.is_list()) && b.is_number() &&
      b.kind() != Value::Kind::kFloat) {
    // Python: a count below 1 gives an empty sequence; the result's size is bounded first.
    const int64_t n = std::max<int64_t>(0, b.int_value());
    const uint64_t unit = a.is_string() ? a.whole_str().size() : a.list().size();
    if (unit != 0 && uint64_t(n) > kMaxValueSize / unit) return CheckBuildSize(kMaxValueSize + 1);
    if (a.is_string()) {
      std::string out;
      out.reserve(size_t(unit * uint64_t(n)));
      for (int64_t i = 0; i < n; ++i) out += a.str();
      return Value::String(out);
    }
    ValueList out;
    for (int64_t i = 0; i < n; ++i) out.insert(out.end(), a.list().begin(), a.list().end());
    return Value::List(std::move(out), a.is_tuple());
  }
  if (op == "*" && (b.is_string() || b.is_list()) && a.is_number() &&
      a.kind() != Value::Kind::kFloat) {
    return Arithmetic(op, b, a);
  }
  if (op == "%" && a.is_string()) {
    return InvalidArgument("printf-style string formatting (%) is not supported");
  }
  return type_error();
}

Result<bool> Contains(const Value& container, const Value& item) {
  if (container.is_string()) {
    if (!item.is_string()) {
      return InvalidArgument(std::string("'in <string>' requires string as left operand, not ") +
                             item.TypeName());
    }
    return container.str().find(item.str()) != std::string::npos;
  }
  if (container.is_list()) {
    for (const Value& v : container.list()) {
      if (Equal(v, item)) return true;
    }
    return false;
  }
  if (container.is_dict() && !container.is_namespace()) {
    if ((item.is_list() && !item.is_tuple()) || item.is_dict()) {
      return InvalidArgument(std::string("unhashable type: '") + item.TypeName() + "'");
    }
    return item.is_string() && container.dict().Find(item.str()) != nullptr;
  }
  if (container.is_undefined()) return false;
  return InvalidArgument(std::string("argument of type '") + container.TypeName() +
                         "' is not iterable");
}

}  // namespace stoker::jinja
