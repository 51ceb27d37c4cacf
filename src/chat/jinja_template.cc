#include "chat/jinja_template.h"

#include <algorithm>
#include <ctime>
#include <new>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "chat/jinja_builtins.h"
#include "chat/jinja_parser.h"

namespace stoker::jinja {
namespace {

bool HasGeneration(const Body& body) {
  for (const auto& s : body) {
    if (s->kind == Stmt::Kind::kGeneration) return true;
    if (HasGeneration(s->body) || HasGeneration(s->else_body)) return true;
    for (const auto& b : s->branches) {
      if (HasGeneration(b.second)) return true;
    }
  }
  return false;
}

Result<Value> RaiseException(ValueList args, Kwargs) {
  return InvalidArgument("the template raised an error: " +
                         (args.empty() ? std::string() : args[0].Str()));
}

Result<Value> StrftimeNow(ValueList args, Kwargs) {
  if (args.empty() || !args[0].is_string()) return InvalidArgument("strftime_now needs a format");
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[512];
  size_t n = std::strftime(buf, sizeof buf, args[0].str().c_str(), &tm);
  return Value::String(std::string(buf, n));
}

// jinja2's sandbox (transformers renders in one): a range of more than MAX_RANGE items is an
// error before it is built.
constexpr int64_t kMaxRange = 100'000;

Result<Value> Range(ValueList args, Kwargs) {
  for (const Value& a : args) {
    if (!a.is_number() || a.kind() == Value::Kind::kFloat) {
      return InvalidArgument("range() needs integers");
    }
  }
  int64_t start = 0, stop = 0, step = 1;
  if (args.size() == 1) {
    stop = args[0].int_value();
  } else if (args.size() == 2 || args.size() == 3) {
    start = args[0].int_value();
    stop = args[1].int_value();
    if (args.size() == 3) step = args[2].int_value();
  } else {
    return InvalidArgument("range() takes 1 to 3 arguments");
  }
  if (step == 0) return InvalidArgument("range() arg 3 must not be zero");
  // Python's len(range): in 128 bits, as the ends may be any two int64s.
  const __int128 span = step > 0 ? __int128(stop) - start : __int128(start) - stop;
  const __int128 abs_step = step > 0 ? __int128(step) : -__int128(step);
  const __int128 n = span <= 0 ? 0 : (span + abs_step - 1) / abs_step;
  if (n > kMaxRange) {
    return InvalidArgument(
        "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  }
  ValueList out;
  out.reserve(size_t(n));
  for (int64_t k = 0; k < int64_t(n); ++k)
    out.push_back(Value::Int(int64_t(start + __int128(k) * step)));
  return Value::List(std::move(out));
}

Result<Value> MakeNamespace(ValueList args, Kwargs kwargs, bool is_namespace) {
  Dict d;
  for (const Value& a : args) {
    if (!a.is_dict()) return InvalidArgument("namespace()/dict() takes a dict or keywords");
    for (const auto& [k, v] : a.dict().items) d.Set(k, v);
  }
  for (auto& [k, v] : kwargs) {
    if (is_namespace && !k.empty() && k[0] == '_') {
      return InvalidArgument("namespaces cannot store underscore-prefixed attributes (" + k + ")");
    }
    d.Set(k, std::move(v));
  }
  return Value::MakeDict(std::move(d), is_namespace);
}

class Renderer {
 public:
  Renderer(const std::string& name, const Dict& context, const RenderLimits& limits)
      : name_(name), limits_(limits) {
    globals_.vars["raise_exception"] = Value::Func("raise_exception", RaiseException);
    globals_.vars["strftime_now"] = Value::Func("strftime_now", StrftimeNow);
    globals_.vars["range"] = Value::Func("range", Range);
    globals_.vars["namespace"] = Value::Func("namespace", [](ValueList a, Kwargs k) {
      return MakeNamespace(std::move(a), std::move(k), true);
    });
    globals_.vars["dict"] = Value::Func("dict", [](ValueList a, Kwargs k) {
      return MakeNamespace(std::move(a), std::move(k), false);
    });
    for (const auto& [k, v] : context.items) root_.vars[k] = v;
    root_.parent = &globals_;
    cur_ = &root_;
    out_ = &output_.text;
  }
  // Values are reference-counted and only a namespace changes after it is built, so a cycle
  // ({% set ns.a = ns %}) always passes through a namespace assigned to here: emptying those
  // frees the cycle (nothing of a render outlives it but its text).
  ~Renderer() {
    for (const Value& ns : assigned_namespaces_) ns.mutable_dict().items.clear();
  }

  Result<RenderOutput> Run(const Body& body) {
    STOKER_ASSIGN_OR_RETURN(Flow f, Exec(body));
    (void)f;
    return std::move(output_);
  }

 private:
  enum class Flow { kNormal, kBreak, kContinue };
  struct Scope {
    std::unordered_map<std::string, Value> vars;
    Scope* parent = nullptr;
  };
  // Makes `scope` the current one while it lives, then restores the one before.
  class EnterScope {
   public:
    EnterScope(Scope** cur, Scope* scope) : cur_(cur), saved_(*cur) { *cur = scope; }
    ~EnterScope() { *cur_ = saved_; }
    EnterScope(const EnterScope&) = delete;
    EnterScope& operator=(const EnterScope&) = delete;

   private:
    Scope** cur_;
    Scope* saved_;
  };

  Status Located(const Status& st, int line) const {
    if (st.ok() || st.message().rfind("chat template ", 0) == 0) return st;
    return Status(st.code(),
                  "chat template " + name_ + " line " + std::to_string(line) + ": " + st.message());
  }
  template <typename T>
  Result<T> Loc(Result<T> r, int line) const {
    if (r.ok()) return r;
    return Located(r.status(), line);
  }

  Value Lookup(const std::string& n) const {
    for (const Scope* s = cur_; s; s = s->parent) {
      auto it = s->vars.find(n);
      if (it != s->vars.end()) return it->second;
    }
    return Value();
  }

  // One level of the render's recursion while it lives (RenderLimits::max_depth).
  class Level {
   public:
    explicit Level(Renderer* r) : r_(r) { ++r_->depth_; }
    ~Level() { --r_->depth_; }
    Level(const Level&) = delete;
    Level& operator=(const Level&) = delete;
    Status status() const {
      if (r_->depth_ <= r_->limits_.max_depth) return Status::OK();
      return InvalidArgument("expressions, blocks and macro calls nested too deeply (more than " +
                             std::to_string(r_->limits_.max_depth) + " levels while rendering)");
    }

   private:
    Renderer* r_;
  };

  // One step of work: an expression, a statement or a loop's iteration (RenderLimits::max_steps).
  Status Step() {
    if (++steps_ <= limits_.max_steps) return Status::OK();
    return InvalidArgument("the template ran for more than " + std::to_string(limits_.max_steps) +
                           " steps (stoker's bound on one rendering)");
  }

  Result<Flow> Exec(const Body& body) {
    Level level(this);
    STOKER_RETURN_IF_ERROR(level.status());
    for (const auto& s : body) {
      STOKER_RETURN_IF_ERROR(Located(Step(), s->line));
      STOKER_ASSIGN_OR_RETURN(Flow f, Loc(ExecOne(*s), s->line));
      if (out_->size() > limits_.max_output_bytes) {
        return Located(InvalidArgument("the template writes more than " +
                                       std::to_string(limits_.max_output_bytes) +
                                       " bytes (stoker's bound on one rendering)"),
                       s->line);
      }
      if (f != Flow::kNormal) return f;
    }
    return Flow::kNormal;
  }

  Result<Flow> ExecOne(const Stmt& s) {
    switch (s.kind) {
      case Stmt::Kind::kText:
        *out_ += s.text;
        return Flow::kNormal;
      case Stmt::Kind::kOutput: {
        if (s.expr->kind == Expr::Kind::kBinary && s.expr->name == "+") return OutputSum(*s.expr);
        STOKER_ASSIGN_OR_RETURN(Value v, Eval(*s.expr));
        *out_ += v.is_string() ? v.whole_str() : v.Str();
        return Flow::kNormal;
      }
      case Stmt::Kind::kIf:
        for (const auto& [cond, body] : s.branches) {
          STOKER_ASSIGN_OR_RETURN(Value c, Eval(*cond));
          if (c.Truthy()) return Exec(body);
        }
        return Exec(s.else_body);
      case Stmt::Kind::kFor:
        return ExecFor(s);
      case Stmt::Kind::kSet: {
        STOKER_ASSIGN_OR_RETURN(Value v, Eval(*s.expr));
        STOKER_RETURN_IF_ERROR(Assign(s, std::move(v)));
        return Flow::kNormal;
      }
      case Stmt::Kind::kSetBlock: {
        STOKER_ASSIGN_OR_RETURN(std::string text, Capture(s.body));
        cur_->vars[s.targets[0]] = Value::String(std::move(text));
        return Flow::kNormal;
      }
      case Stmt::Kind::kMacro: {
        const Stmt* m = &s;
        cur_->vars[s.name] = Value::Func(s.name, [this, m](ValueList a, Kwargs k) {
          return CallMacro(*m, std::move(a), std::move(k));
        });
        return Flow::kNormal;
      }
      case Stmt::Kind::kGeneration: {
        if (capture_depth_ > 0) {
          return InvalidArgument("a {% generation %} block inside a macro or a block set");
        }
        size_t begin = out_->size();
        STOKER_ASSIGN_OR_RETURN(Flow f, Exec(s.body));
        output_.generation_spans.emplace_back(begin, out_->size());
        return f;
      }
      case Stmt::Kind::kBreak:
        return Flow::kBreak;
      case Stmt::Kind::kContinue:
        return Flow::kContinue;
    }
    return Flow::kNormal;
  }

  // {{ a + b + c }}: while the terms are strings, each is appended to the output as it comes,
  // not concatenated into a new string at every `+` first (a template's
  // `'<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>'` copied the content
  // three times). The first term that is not a string turns the rest into the plain evaluation:
  // the same order, the same values, the same errors at the same lines.
  Result<Flow> OutputSum(const Expr& top) {
    std::vector<const Expr*> sums;  // innermost first: sums[k] adds term k + 1
    const Expr* first = &top;
    while (first->kind == Expr::Kind::kBinary && first->name == "+") {
      sums.push_back(first);
      first = first->args[0].get();
    }
    std::reverse(sums.begin(), sums.end());
    const size_t mark = out_->size();
    STOKER_ASSIGN_OR_RETURN(Value acc, Eval(*first));
    bool strings = acc.is_string();
    if (strings) *out_ += acc.whole_str();
    for (const Expr* sum : sums) {
      Result<Value> term = Eval(*sum->args[1]);
      if (!term.ok()) {
        out_->resize(mark);
        return term.status();
      }
      if (strings && term->is_string()) {
        *out_ += term->whole_str();
        continue;
      }
      if (strings) {
        acc = Value::String(out_->substr(mark));
        out_->resize(mark);
        strings = false;
      }
      STOKER_ASSIGN_OR_RETURN(acc, Loc(Arithmetic("+", acc, *term), sum->line));
    }
    if (!strings) *out_ += acc.is_string() ? acc.whole_str() : acc.Str();
    return Flow::kNormal;
  }

  Status Assign(const Stmt& s, Value v) {
    if (!s.attr.empty()) {
      Value ns = Lookup(s.targets[0]);
      if (!ns.is_namespace()) {
        return InvalidArgument("cannot assign attribute on non-namespace object " + s.targets[0]);
      }
      if (s.attr[0] == '_') return InvalidArgument("namespaces cannot store '" + s.attr + "'");
      ns.mutable_dict().Set(s.attr, std::move(v));
      if (assigned_.insert(&ns.dict()).second) assigned_namespaces_.push_back(std::move(ns));
      return Status::OK();
    }
    if (s.targets.size() == 1) {
      cur_->vars[s.targets[0]] = std::move(v);
      return Status::OK();
    }
    if (!v.is_list() || v.list().size() != s.targets.size()) {
      return InvalidArgument("cannot unpack into " + std::to_string(s.targets.size()) + " names");
    }
    for (size_t i = 0; i < s.targets.size(); ++i) cur_->vars[s.targets[i]] = v.list()[i];
    return Status::OK();
  }

  Result<std::string> Capture(const Body& body) {
    std::string buf;
    std::string* saved = out_;
    out_ = &buf;
    ++capture_depth_;
    Result<Flow> r = Exec(body);
    --capture_depth_;
    out_ = saved;
    if (!r.ok()) return r.status();
    return buf;
  }

  Result<Value> CallMacro(const Stmt& m, ValueList args, Kwargs kwargs) {
    // Macros may call themselves; the depth is bounded so that the stack is.
    if (macro_depth_ >= 100) return InvalidArgument("macro calls nested too deeply");
    ++macro_depth_;
    Result<Value> r = CallMacroInner(m, std::move(args), std::move(kwargs));
    --macro_depth_;
    return r;
  }

  Result<Value> CallMacroInner(const Stmt& m, ValueList args, Kwargs kwargs) {
    if (args.size() > m.params.size()) {
      return InvalidArgument("macro '" + m.name + "' takes not more than " +
                             std::to_string(m.params.size()) + " argument(s)");
    }
    Scope scope;
    scope.parent = &root_;
    EnterScope enter(&cur_, &scope);
    for (size_t i = 0; i < m.params.size(); ++i) {
      const auto& [pname, def] = m.params[i];
      Value v;
      bool set = false;
      if (i < args.size()) {
        v = args[i];
        set = true;
      }
      for (auto& [k, kv] : kwargs) {
        if (k == pname) {
          v = kv;
          set = true;
        }
      }
      if (!set && def) {
        STOKER_ASSIGN_OR_RETURN(v, Eval(*def));
      }
      scope.vars[pname] = v;
    }
    for (auto& [k, kv] : kwargs) {
      bool known = false;
      for (const auto& p : m.params) known |= p.first == k;
      if (!known) {
        return InvalidArgument("macro '" + m.name + "' takes no keyword argument '" + k + "'");
      }
    }
    STOKER_ASSIGN_OR_RETURN(std::string text, Capture(m.body));
    return Value::String(std::move(text));
  }

  Result<Flow> ExecFor(const Stmt& s) {
    STOKER_ASSIGN_OR_RETURN(Value seq, Eval(*s.expr));
    STOKER_ASSIGN_OR_RETURN(ValueList items, Iterate(seq));
    Scope* saved = cur_;
    if (s.cond) {
      // The loop's filter sees each item under the loop's names; loop.* counts filtered items.
      ValueList kept;
      for (const Value& item : items) {
        Scope scope;
        scope.parent = saved;
        EnterScope enter(&cur_, &scope);
        STOKER_RETURN_IF_ERROR(Bind(s, item));
        STOKER_ASSIGN_OR_RETURN(Value c, Eval(*s.cond));
        if (c.Truthy()) kept.push_back(item);
      }
      items = std::move(kept);
    }
    if (items.empty()) return Exec(s.else_body);
    const int64_t n = int64_t(items.size());
    for (int64_t i = 0; i < n; ++i) {
      Scope scope;
      scope.parent = saved;
      EnterScope enter(&cur_, &scope);
      Dict loop;
      loop.items = {{"index0", Value::Int(i)},
                    {"index", Value::Int(i + 1)},
                    {"revindex0", Value::Int(n - i - 1)},
                    {"revindex", Value::Int(n - i)},
                    {"first", Value::Bool(i == 0)},
                    {"last", Value::Bool(i == n - 1)},
                    {"length", Value::Int(n)},
                    {"depth", Value::Int(1)},
                    {"depth0", Value::Int(0)}};
      if (i > 0) loop.items.emplace_back("previtem", items[size_t(i - 1)]);
      if (i + 1 < n) loop.items.emplace_back("nextitem", items[size_t(i + 1)]);
      scope.vars["loop"] = Value::MakeDict(std::move(loop));
      STOKER_RETURN_IF_ERROR(Step());
      STOKER_RETURN_IF_ERROR(Bind(s, items[size_t(i)]));
      STOKER_ASSIGN_OR_RETURN(Flow f, Exec(s.body));
      if (f == Flow::kBreak) break;
    }
    return Flow::kNormal;
  }

  Status Bind(const Stmt& s, const Value& item) {
    if (s.targets.size() == 1) {
      cur_->vars[s.targets[0]] = item;
      return Status::OK();
    }
    ValueList parts;
    if (item.is_list()) {
      parts = item.list();
    } else if (item.is_string()) {
      STOKER_ASSIGN_OR_RETURN(parts, Iterate(item));
    }
    if (parts.size() != s.targets.size()) {
      return InvalidArgument("cannot unpack a " + std::string(item.TypeName()) + " into " +
                             std::to_string(s.targets.size()) + " loop variables");
    }
    for (size_t i = 0; i < parts.size(); ++i) cur_->vars[s.targets[i]] = parts[i];
    return Status::OK();
  }

  Status EvalArgs(const Expr& e, size_t first, ValueList* args, Kwargs* kwargs) {
    for (size_t i = first; i < e.args.size(); ++i) {
      STOKER_ASSIGN_OR_RETURN(Value v, Eval(*e.args[i]));
      args->push_back(std::move(v));
    }
    for (const auto& [k, x] : e.kwargs) {
      STOKER_ASSIGN_OR_RETURN(Value v, Eval(*x));
      kwargs->emplace_back(k, std::move(v));
    }
    return Status::OK();
  }

  Result<Value> Eval(const Expr& e) {
    Level level(this);
    STOKER_RETURN_IF_ERROR(Located(level.status(), e.line));
    STOKER_RETURN_IF_ERROR(Located(Step(), e.line));
    Result<Value> v = EvalInner(e);
    if (v.ok()) STOKER_RETURN_IF_ERROR(Located(CheckValueSize(*v), e.line));
    return Loc(std::move(v), e.line);
  }

  Result<Value> EvalInner(const Expr& e) {
    using K = Expr::Kind;
    switch (e.kind) {
      case K::kLiteral:
        return e.literal;
      case K::kName:
        return Lookup(e.name);
      case K::kList:
      case K::kTuple: {
        ValueList items;
        for (const auto& x : e.args) {
          STOKER_ASSIGN_OR_RETURN(Value v, Eval(*x));
          items.push_back(std::move(v));
        }
        return Value::List(std::move(items), e.kind == K::kTuple);
      }
      case K::kDict: {
        Dict d;
        for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
          STOKER_ASSIGN_OR_RETURN(Value k, Eval(*e.args[i]));
          if (!k.is_string())
            return InvalidArgument("dict keys other than strings are not supported");
          STOKER_ASSIGN_OR_RETURN(Value v, Eval(*e.args[i + 1]));
          d.Set(k.str(), std::move(v));
        }
        return Value::MakeDict(std::move(d));
      }
      case K::kAttr: {
        STOKER_ASSIGN_OR_RETURN(Value obj, Eval(*e.args[0]));
        if (obj.is_undefined() && e.args[0]->kind == K::kName) {
          return InvalidArgument("'" + e.args[0]->name + "' is undefined");
        }
        return GetAttr(obj, e.name);
      }
      case K::kItem: {
        STOKER_ASSIGN_OR_RETURN(Value obj, Eval(*e.args[0]));
        STOKER_ASSIGN_OR_RETURN(Value key, Eval(*e.args[1]));
        return GetItem(obj, key);
      }
      case K::kSlice: {
        STOKER_ASSIGN_OR_RETURN(Value obj, Eval(*e.args[0]));
        Value parts[3];
        for (int i = 0; i < 3; ++i) {
          if (e.args[i + 1]) {
            STOKER_ASSIGN_OR_RETURN(parts[i], Eval(*e.args[i + 1]));
          }
        }
        return GetSlice(obj, parts[0], parts[1], parts[2]);
      }
      case K::kCall:
        return EvalCall(e);
      case K::kFilter:
      case K::kTest: {
        STOKER_ASSIGN_OR_RETURN(Value v, Eval(*e.args[0]));
        ValueList args;
        Kwargs kwargs;
        STOKER_RETURN_IF_ERROR(EvalArgs(e, 1, &args, &kwargs));
        if (e.kind == K::kFilter) return ApplyFilter(e.name, v, args, kwargs);
        STOKER_ASSIGN_OR_RETURN(bool b, ApplyTest(e.name, v, args));
        return Value::Bool(b != e.negated);
      }
      case K::kUnary: {
        STOKER_ASSIGN_OR_RETURN(Value v, Eval(*e.args[0]));
        if (e.name == "not") return Value::Bool(!v.Truthy());
        if (v.is_big_int()) return e.name == "+" ? v : Arithmetic("-", Value::Int(0), v);
        if (!v.is_number()) {
          return InvalidArgument(std::string("bad operand type for unary ") + e.name + ": '" +
                                 v.TypeName() + "'");
        }
        if (e.name == "+") return v.kind() == Value::Kind::kBool ? Value::Int(v.int_value()) : v;
        if (v.kind() == Value::Kind::kFloat) return Value::Float(-v.float_value());
        return Arithmetic("-", Value::Int(0), v);  // -(-2**63) is past int64: an error
      }
      case K::kBinary: {
        STOKER_ASSIGN_OR_RETURN(Value a, Eval(*e.args[0]));
        STOKER_ASSIGN_OR_RETURN(Value b, Eval(*e.args[1]));
        if (e.name == "~") {
          // Python's str() of each; a string is passed on whole, not read (ReadWatch).
          std::string x_str, y_str;
          const std::string& x = a.is_string() ? a.whole_str() : (x_str = a.Str());
          const std::string& y = b.is_string() ? b.whole_str() : (y_str = b.Str());
          STOKER_RETURN_IF_ERROR(CheckBuildSize(uint64_t(x.size()) + y.size()));
          std::string out;
          out.reserve(x.size() + y.size());
          out.append(x).append(y);
          return Value::String(std::move(out));
        }
        return Arithmetic(e.name, a, b);
      }
      case K::kAnd:
      case K::kOr: {
        STOKER_ASSIGN_OR_RETURN(Value a, Eval(*e.args[0]));
        if (a.Truthy() == (e.kind == K::kOr)) return a;
        return Eval(*e.args[1]);
      }
      case K::kCompare: {
        STOKER_ASSIGN_OR_RETURN(Value left, Eval(*e.args[0]));
        for (size_t i = 0; i < e.ops.size(); ++i) {
          STOKER_ASSIGN_OR_RETURN(Value right, Eval(*e.args[i + 1]));
          const std::string& op = e.ops[i];
          bool r;
          if (op == "==") {
            r = Equal(left, right);
          } else if (op == "!=") {
            r = !Equal(left, right);
          } else if (op == "in" || op == "notin") {
            STOKER_ASSIGN_OR_RETURN(bool c, Contains(right, left));
            r = c == (op == "in");
          } else {
            STOKER_ASSIGN_OR_RETURN(int c, Compare(left, right));
            r = op == "<" ? c < 0 : op == ">" ? c > 0 : op == "<=" ? c <= 0 : c >= 0;
          }
          if (!r) return Value::Bool(false);
          left = std::move(right);
        }
        return Value::Bool(true);
      }
      case K::kCond: {
        STOKER_ASSIGN_OR_RETURN(Value c, Eval(*e.args[1]));
        if (c.Truthy()) return Eval(*e.args[0]);
        if (e.args[2]) return Eval(*e.args[2]);
        return Value();
      }
    }
    return Internal("unknown expression kind");
  }

  Result<Value> EvalCall(const Expr& e) {
    const Expr& callee = *e.args[0];
    ValueList args;
    Kwargs kwargs;
    if (callee.kind == Expr::Kind::kAttr) {
      STOKER_ASSIGN_OR_RETURN(Value obj, Eval(*callee.args[0]));
      if (IsMethod(obj, callee.name)) {
        STOKER_RETURN_IF_ERROR(EvalArgs(e, 1, &args, &kwargs));
        return *CallMethod(obj, callee.name, args, kwargs);
      }
      if (obj.is_list() && !obj.is_tuple()) {
        return InvalidArgument("list." + callee.name +
                               "() is not supported (the sandbox keeps lists immutable)");
      }
    }
    STOKER_ASSIGN_OR_RETURN(Value fn, Eval(callee));
    if (!fn.is_function()) {
      std::string what = callee.kind == Expr::Kind::kName ? "'" + callee.name + "'" : "a value";
      return InvalidArgument(what + (fn.is_undefined() ? " is undefined" : " is not callable") +
                             " (stoker's chat renderer has the globals raise_exception, "
                             "strftime_now, namespace, dict and range)");
    }
    STOKER_RETURN_IF_ERROR(EvalArgs(e, 1, &args, &kwargs));
    return fn.function()(std::move(args), std::move(kwargs));
  }

  const std::string& name_;
  const RenderLimits& limits_;
  int64_t steps_ = 0;
  int depth_ = 0;
  Scope globals_;
  Scope root_;
  Scope* cur_ = nullptr;
  std::string* out_ = nullptr;
  int capture_depth_ = 0;
  int macro_depth_ = 0;
  RenderOutput output_;
  std::vector<Value> assigned_namespaces_;  // emptied at the end, see ~Renderer
  std::unordered_set<const Dict*> assigned_;
};

}  // namespace

Result<Template> Template::Parse(std::string_view source, std::string name) {
  STOKER_ASSIGN_OR_RETURN(Body body, jinja::Parse(source, name));
  Template t;
  t.name_ = std::move(name);
  t.has_generation_ = HasGeneration(body);
  t.body_ = std::make_shared<const Body>(std::move(body));
  return t;
}

Result<RenderOutput> Template::Render(const Dict& context, const RenderLimits& limits) const {
  // The bounds keep a rendering's memory small; where the process has less (a memory limit),
  // running out is this rendering's error, not the process's end.
  try {
    return Renderer(name_, context, limits).Run(*body_);
  } catch (const std::bad_alloc&) {
    return InvalidArgument("chat template " + name_ + ": out of memory while rendering");
  } catch (const std::length_error&) {
    return InvalidArgument("chat template " + name_ + ": out of memory while rendering");
  }
}

}  // namespace stoker::jinja
