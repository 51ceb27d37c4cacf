// The filters and tests of the Jinja subset (jinja_builtins.h).
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "chat/jinja_builtins.h"
#include "chat/jinja_pystr.h"

namespace stoker::jinja {
namespace {

const char* const kFilters[] = {
    "abs",     "capitalize", "count",  "d",          "default", "first",      "float",
    "indent",  "int",        "items",  "join",       "last",    "length",     "list",
    "lower",   "map",        "max",    "min",        "reject",  "rejectattr", "replace",
    "reverse", "safe",       "select", "selectattr", "sort",    "string",     "sum",
    "title",   "tojson",     "trim",   "unique",     "upper"};
const char* const kTests[] = {
    "defined", "undefined",   "none",    "boolean",     "false",    "true",     "integer",  "float",
    "number",  "string",      "mapping", "iterable",    "sequence", "callable", "sameas",   "eq",
    "equalto", "==",          "ne",      "!=",          "lt",       "<",        "lessthan", "le",
    "<=",      "gt",          ">",       "greaterthan", "ge",       ">=",       "in",       "even",
    "odd",     "divisibleby", "lower",   "upper"};

// Positional argument `pos` or keyword `name`; null when neither is given.
const Value* Arg(const ValueList& args, const Kwargs& kwargs, size_t pos, const char* name) {
  if (pos < args.size()) return &args[pos];
  for (const auto& [k, v] : kwargs) {
    if (k == name) return &v;
  }
  return nullptr;
}

bool BoolArg(const Value* v, bool def) { return v ? v->Truthy() : def; }

// jinja2's make_attrgetter: "a.b.0" looked up part by part.
Result<Value> AttrPath(const Value& item, const std::string& path) {
  Value cur = item;
  size_t pos = 0;
  while (true) {
    size_t dot = path.find('.', pos);
    std::string part = path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    bool digits = !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit);
    Value key = digits ? Value::Int(std::atoll(part.c_str())) : Value::String(part);
    STOKER_ASSIGN_OR_RETURN(cur, GetItem(cur, key));
    if (dot == std::string::npos) return cur;
    pos = dot + 1;
  }
}

// The item itself, or with an `attribute` argument given, its AttrPath.
Result<Value> MaybeAttr(const Value& item, const Value* attribute) {
  if (!attribute) return item;
  return AttrPath(item, attribute->Str());
}

Result<int64_t> PyInt(const Value& v, int64_t def) {
  if (v.is_number()) {
    return v.kind() == Value::Kind::kFloat ? int64_t(std::trunc(v.float_value())) : v.int_value();
  }
  if (v.is_string()) {
    std::string digits = PyStrip(v.str(), std::nullopt, true, true);
    std::erase(digits, '_');
    char* end = nullptr;
    long long i = std::strtoll(digits.c_str(), &end, 10);
    if (!digits.empty() && end && *end == 0) return int64_t(i);
    double d = std::strtod(digits.c_str(), &end);
    if (!digits.empty() && end && *end == 0 && std::isfinite(d)) return int64_t(std::trunc(d));
  }
  return def;
}

Result<Value> Tojson(const Value& v, const ValueList& args, const Kwargs& kwargs) {
  bool ensure_ascii = BoolArg(Arg(args, kwargs, 0, "ensure_ascii"), false);
  const Value* indent = Arg(args, kwargs, 1, "indent");
  const Value* seps = Arg(args, kwargs, 2, "separators");
  bool sort_keys = BoolArg(Arg(args, kwargs, 3, "sort_keys"), false);
  std::string indent_str;
  bool has_indent = indent && !indent->is_none() && !indent->is_undefined();
  if (has_indent) {
    if (indent->is_string()) {
      indent_str = indent->str();
    } else if (indent->is_number()) {
      // json.dumps: " " * indent, so a negative indent is "".
      const int64_t width = std::max<int64_t>(0, indent->int_value());
      STOKER_RETURN_IF_ERROR(CheckBuildSize(uint64_t(width)));
      indent_str = std::string(size_t(width), ' ');
    } else {
      return InvalidArgument("tojson: indent must be an int or a string");
    }
  }
  std::string item_sep = has_indent ? "," : ", ", key_sep = ": ";
  if (seps && !seps->is_none() && !seps->is_undefined()) {
    if (!seps->is_list() || seps->list().size() != 2 || !seps->list()[0].is_string() ||
        !seps->list()[1].is_string()) {
      return InvalidArgument("tojson: separators must be a pair of strings");
    }
    item_sep = seps->list()[0].str();
    key_sep = seps->list()[1].str();
  }
  std::string out;
  STOKER_RETURN_IF_ERROR(v.AppendJson(&out, ensure_ascii, has_indent ? &indent_str : nullptr,
                                      item_sep, key_sep, sort_keys, 0));
  return Value::String(std::move(out));
}

Result<Value> Indent(const Value& v, const ValueList& args, const Kwargs& kwargs) {
  const Value* w = Arg(args, kwargs, 0, "width");
  // jinja2: " " * width, so a negative width indents by nothing.
  const int64_t width = w && !w->is_string() ? std::max<int64_t>(0, w->int_value()) : 4;
  STOKER_RETURN_IF_ERROR(CheckBuildSize(uint64_t(width)));
  std::string ind = w && w->is_string() ? w->str() : std::string(size_t(width), ' ');
  bool first = BoolArg(Arg(args, kwargs, 1, "first"), false);
  bool blank = BoolArg(Arg(args, kwargs, 2, "blank"), false);
  std::vector<std::string> lines = PySplitLines(v.Str() + "\n");
  STOKER_RETURN_IF_ERROR(CheckBuildSize(uint64_t(ind.size()) * (lines.size() + 1)));
  std::string rv;
  if (blank) {
    for (size_t i = 0; i < lines.size(); ++i) rv += (i ? "\n" + ind : "") + lines[i];
  } else {
    rv = lines.empty() ? "" : lines[0];
    for (size_t i = 1; i < lines.size(); ++i) {
      rv += "\n" + (lines[i].empty() ? "" : ind + lines[i]);
    }
  }
  return Value::String(first ? ind + rv : rv);
}

// select/reject/selectattr/rejectattr.
Result<Value> Select(const std::string& name, const Value& v, const ValueList& args) {
  bool attr = name.size() > 4 && name.compare(name.size() - 4, 4, "attr") == 0;
  bool keep = name.rfind("select", 0) == 0;
  size_t t = 0;
  std::string path;
  if (attr) {
    if (args.empty() || !args[0].is_string()) return InvalidArgument(name + " needs an attribute");
    path = args[0].str();
    t = 1;
  }
  if (!v.Truthy()) return Value::List({});  // jinja2: `if seq: for item in seq`
  STOKER_ASSIGN_OR_RETURN(ValueList items, Iterate(v));
  ValueList out;
  for (const Value& item : items) {
    Value x = item;
    if (attr) {
      STOKER_ASSIGN_OR_RETURN(x, AttrPath(item, path));
    }
    bool pass;
    if (t < args.size()) {
      if (!args[t].is_string()) return InvalidArgument(name + ": the test must be a name");
      if (!IsKnownTest(args[t].str())) {
        return InvalidArgument("the test '" + args[t].str() + "' is not supported");
      }
      ValueList targs(args.begin() + t + 1, args.end());
      STOKER_ASSIGN_OR_RETURN(pass, ApplyTest(args[t].str(), x, targs));
    } else {
      pass = x.Truthy();
    }
    if (pass == keep) out.push_back(item);
  }
  return Value::List(std::move(out));
}

Result<Value> Map(const Value& v, const ValueList& args, const Kwargs& kwargs) {
  if (!v.Truthy()) return Value::List({});  // jinja2: `if value: for item in value`
  STOKER_ASSIGN_OR_RETURN(ValueList items, Iterate(v));
  ValueList out;
  const Value* attribute = Arg({}, kwargs, 0, "attribute");
  if (attribute) {
    const Value* def = Arg({}, kwargs, 0, "default");
    for (const Value& item : items) {
      STOKER_ASSIGN_OR_RETURN(Value x, AttrPath(item, attribute->Str()));
      out.push_back(x.is_undefined() && def ? *def : x);
    }
    return Value::List(std::move(out));
  }
  if (args.empty() || !args[0].is_string()) return InvalidArgument("map needs a filter name");
  const std::string& filter = args[0].str();
  if (!IsKnownFilter(filter))
    return InvalidArgument("the filter '" + filter + "' is not supported");
  ValueList fargs(args.begin() + 1, args.end());
  for (const Value& item : items) {
    STOKER_ASSIGN_OR_RETURN(Value x, ApplyFilter(filter, item, fargs, kwargs));
    out.push_back(std::move(x));
  }
  return Value::List(std::move(out));
}

// sort, unique, min, max: strings compare case-insensitively unless case_sensitive.
Result<Value> Ordered(const std::string& name, const Value& v, const ValueList& args,
                      const Kwargs& kwargs) {
  bool reverse = name == "sort" && BoolArg(Arg(args, kwargs, 0, "reverse"), false);
  bool cs = BoolArg(Arg(args, kwargs, name == "sort" ? 1 : 0, "case_sensitive"), false);
  const Value* attribute = Arg(args, kwargs, name == "sort" ? 2 : 1, "attribute");
  STOKER_ASSIGN_OR_RETURN(ValueList items, Iterate(v));
  std::vector<std::pair<Value, Value>> keyed;
  for (const Value& item : items) {
    STOKER_ASSIGN_OR_RETURN(Value k, MaybeAttr(item, attribute));
    if (!cs && k.is_string()) k = Value::String(PyLower(k.str()));
    keyed.emplace_back(std::move(k), item);
  }
  Status err;
  auto less = [&](const std::pair<Value, Value>& a, const std::pair<Value, Value>& b) {
    Result<int> c = Compare(a.first, b.first);
    if (!c.ok()) {
      err = c.status();
      return false;
    }
    return *c < 0;
  };
  ValueList out;
  if (name == "unique") {
    std::vector<Value> seen;
    for (auto& entry : keyed) {
      // Not a structured binding: clang 14 (the fuzz build) cannot capture one in a lambda.
      const Value& k = entry.first;
      if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return Equal(s, k); })) {
        seen.push_back(k);
        out.push_back(entry.second);
      }
    }
    return Value::List(std::move(out));
  }
  if (name == "min" || name == "max") {
    if (keyed.empty()) return Value();
    auto it = name == "min" ? std::min_element(keyed.begin(), keyed.end(), less)
                            : std::max_element(keyed.begin(), keyed.end(), less);
    if (!err.ok()) return err;
    return it->second;
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [&](const auto& a, const auto& b) { return reverse ? less(b, a) : less(a, b); });
  if (!err.ok()) return err;
  for (auto& kv : keyed) out.push_back(kv.second);
  return Value::List(std::move(out));
}

}  // namespace

bool IsKnownFilter(std::string_view name) {
  return std::find(std::begin(kFilters), std::end(kFilters), name) != std::end(kFilters);
}

bool IsKnownTest(std::string_view name) {
  return std::find(std::begin(kTests), std::end(kTests), name) != std::end(kTests);
}

Result<Value> ApplyFilter(const std::string& name, const Value& v, const ValueList& args,
                          const Kwargs& kwargs) {
  if (name == "safe") return v;
  if (name == "default" || name == "d") {
    const Value* def = Arg(args, kwargs, 0, "default_value");
    bool boolean = BoolArg(Arg(args, kwargs, 1, "boolean"), false);
    if (v.is_undefined() || (boolean && !v.Truthy())) return def ? *def : Value::String("");
    return v;
  }
  if (name == "length" || name == "count") {
    int64_t n = v.Length();
    if (n < 0)
      return InvalidArgument(std::string("object of type '") + v.TypeName() + "' has no len()");
    return Value::Int(n);
  }
  if (name == "string") return Value::String(v.Str());
  if (name == "trim") {
    const Value* chars = Arg(args, kwargs, 0, "chars");
    std::optional<std::string> c;
    if (chars && chars->is_string()) c = chars->str();
    return Value::String(PyStrip(v.Str(), c, true, true));
  }
  if (name == "upper") return Value::String(PyUpper(v.Str()));
  if (name == "lower") return Value::String(PyLower(v.Str()));
  if (name == "capitalize") return Value::String(PyCapitalize(v.Str()));
  if (name == "title") return Value::String(JinjaTitle(v.Str()));
  if (name == "replace") {
    const Value* old = Arg(args, kwargs, 0, "old");
    const Value* repl = Arg(args, kwargs, 1, "new");
    const Value* count = Arg(args, kwargs, 2, "count");
    if (!old || !repl) return InvalidArgument("replace needs old and new");
    return Value::String(PyReplace(v.Str(), old->Str(), repl->Str(),
                                   count && count->is_number() ? long(count->int_value()) : -1));
  }
  if (name == "tojson") return Tojson(v, args, kwargs);
  if (name == "join") {
    const Value* sep = Arg(args, kwargs, 0, "d");
    const Value* attribute = Arg(args, kwargs, 1, "attribute");
    STOKER_ASSIGN_OR_RETURN(ValueList items, Iterate(v));
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
      if (i && sep) out += sep->Str();
      STOKER_ASSIGN_OR_RETURN(Value x, MaybeAttr(items[i], attribute));
      out += x.Str();
    }
    return Value::String(out);
  }
  if (name == "items") {
    if (v.is_undefined()) return Value::List({});
    if (!v.is_dict() || v.is_namespace()) {
      return InvalidArgument(std::string("can only get item pairs from a mapping, not ") +
                             v.TypeName());
    }
    ValueList out;
    for (const auto& [k, x] : v.dict().items)
      out.push_back(Value::List({Value::String(k), x}, true));
    return Value::List(std::move(out));
  }
  if (name == "first") {
    STOKER_ASSIGN_OR_RETURN(ValueList items, Iterate(v));
    return items.empty() ? Value() : items.front();
  }
  if (name == "last") {
    if (!v.is_list() && !v.is_string() && !(v.is_dict() && !v.is_namespace())) {
      return InvalidArgument(std::string("last: '") + v.TypeName() + "' object is not reversible");
    }
    STOKER_ASSIGN_OR_RETURN(ValueList items, Iterate(v));
    return items.empty() ? Value() : items.back();
  }
  if (name == "list") {
    STOKER_ASSIGN_OR_RETURN(ValueList items, Iterate(v));
    return Value::List(std::move(items));
  }
  if (name == "reverse") {
    if (v.is_string()) {
      std::u32string u = ToU32(v.str());
      std::reverse(u.begin(), u.end());
      return Value::String(FromU32(u));
    }
    STOKER_ASSIGN_OR_RETURN(ValueList items, Iterate(v));
    std::reverse(items.begin(), items.end());
    return Value::List(std::move(items));
  }
  if (name == "int") {
    const Value* def = Arg(args, kwargs, 0, "default");
    STOKER_ASSIGN_OR_RETURN(int64_t i, PyInt(v, def ? def->int_value() : 0));
    return Value::Int(i);
  }
  if (name == "float") {
    if (v.is_number()) return Value::Float(v.float_value());
    if (v.is_string()) {
      std::string s = PyStrip(v.str(), std::nullopt, true, true);
      char* end = nullptr;
      double d = std::strtod(s.c_str(), &end);
      if (!s.empty() && end && *end == 0) return Value::Float(d);
    }
    const Value* def = Arg(args, kwargs, 0, "default");
    return def ? Value::Float(def->float_value()) : Value::Float(0.0);
  }
  if (name == "abs") {
    if (v.kind() == Value::Kind::kFloat) return Value::Float(std::fabs(v.float_value()));
    if (v.is_number()) return Value::Int(std::llabs(v.int_value()));
    return InvalidArgument(std::string("bad operand type for abs(): '") + v.TypeName() + "'");
  }
  if (name == "indent") return Indent(v, args, kwargs);
  if (name == "map") return Map(v, args, kwargs);
  if (name == "select" || name == "reject" || name == "selectattr" || name == "rejectattr") {
    return Select(name, v, args);
  }
  if (name == "sort" || name == "unique" || name == "min" || name == "max") {
    return Ordered(name, v, args, kwargs);
  }
  if (name == "sum") {
    const Value* attribute = Arg(args, kwargs, 0, "attribute");
    const Value* start = Arg(args, kwargs, 1, "start");
    Value acc = start ? *start : Value::Int(0);
    STOKER_ASSIGN_OR_RETURN(ValueList items, Iterate(v));
    for (const Value& item : items) {
      STOKER_ASSIGN_OR_RETURN(Value x, MaybeAttr(item, attribute));
      STOKER_ASSIGN_OR_RETURN(acc, Arithmetic("+", acc, x));
    }
    return acc;
  }
  return InvalidArgument("the filter '" + name + "' is not supported");
}

Result<bool> ApplyTest(const std::string& name, const Value& v, const ValueList& args) {
  using K = Value::Kind;
  auto arg = [&]() -> Result<Value> {
    if (args.empty()) return InvalidArgument("the test '" + name + "' needs an argument");
    return args[0];
  };
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "boolean") return v.kind() == K::kBool;
  if (name == "true") return v.kind() == K::kBool && v.bool_value();
  if (name == "false") return v.kind() == K::kBool && !v.bool_value();
  if (name == "integer") return v.is_integer();
  if (name == "float") return v.kind() == K::kFloat;
  if (name == "number") return v.is_number() || v.is_big_int();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_dict() && !v.is_namespace();
  if (name == "iterable" || name == "sequence") {
    return v.is_undefined() || v.is_string() || v.is_list() || (v.is_dict() && !v.is_namespace());
  }
  if (name == "callable") return v.is_function();
  if (name == "lower") return v.is_string() && PyLower(v.str()) == v.str();
  if (name == "upper") return v.is_string() && PyUpper(v.str()) == v.str();
  if (name == "even" || name == "odd" || name == "divisibleby") {
    if (!v.is_number() || v.kind() == K::kFloat) {
      return InvalidArgument("the test '" + name + "' needs an integer");
    }
    int64_t d = 2;
    if (name == "divisibleby") {
      STOKER_ASSIGN_OR_RETURN(Value a, arg());
      d = a.int_value();
      if (d == 0) return InvalidArgument("divisibleby 0");
    }
    int64_t m = ((v.int_value() % d) + d) % d;
    return name == "odd" ? m == 1 : m == 0;
  }
  STOKER_ASSIGN_OR_RETURN(Value a, arg());
  if (name == "sameas") return v.kind() == a.kind() && Equal(v, a);
  if (name == "eq" || name == "equalto" || name == "==") return Equal(v, a);
  if (name == "ne" || name == "!=") return !Equal(v, a);
  if (name == "in") return Contains(a, v);
  STOKER_ASSIGN_OR_RETURN(int c, Compare(v, a));
  if (name == "lt" || name == "<" || name == "lessthan") return c < 0;
  if (name == "le" || name == "<=") return c <= 0;
  if (name == "gt" || name == ">" || name == "greaterthan") return c > 0;
  if (name == "ge" || name == ">=") return c >= 0;
  return InvalidArgument("the test '" + name + "' is not supported");
}

}  // namespace stoker::jinja
