#include "chat/jinja_parser.h"

#include <algorithm>
#include <initializer_list>

#include "chat/jinja_builtins.h"
#include "chat/jinja_lexer.h"

namespace stoker::jinja {
namespace {

using TT = Token::Type;

class Parser {
 public:
  Parser(const std::vector<Chunk>& chunks, const std::string& name)
      : chunks_(chunks), name_(name) {}

  Result<Body> ParseAll() {
    std::string ended;
    STOKER_ASSIGN_OR_RETURN(Body body, ParseBody({}, &ended));
    return body;
  }

 private:
  Status Error(const std::string& what, int line) const {
    return InvalidArgument("chat template " + name_ + " line " + std::to_string(line) + ": " +
                           what);
  }
  Status ErrorHere(const std::string& what) const {
    return Error(what, ti_ < toks_->size() ? (*toks_)[ti_].line : chunk_line_);
  }

  // --- token cursor within one tag ---
  const Token* Peek(size_t k = 0) const {
    return ti_ + k < toks_->size() ? &(*toks_)[ti_ + k] : nullptr;
  }
  bool IsOp(const char* op, size_t k = 0) const {
    const Token* t = Peek(k);
    return t && t->type == TT::kOp && t->text == op;
  }
  bool IsName(const char* n, size_t k = 0) const {
    const Token* t = Peek(k);
    return t && t->type == TT::kName && t->text == n;
  }
  // Consumes the next token if it is the operator `op` (AcceptName: the name `n`).
  bool Accept(const char* op) {
    if (!IsOp(op)) return false;
    ++ti_;
    return true;
  }
  bool AcceptName(const char* n) {
    if (!IsName(n)) return false;
    ++ti_;
    return true;
  }
  int Line() const { return Peek() ? Peek()->line : chunk_line_; }
  Status Expect(const char* op) {
    if (Accept(op)) return Status::OK();
    return ErrorHere(std::string("expected '") + op + "'" +
                     (Peek() ? ", got '" + Peek()->text + "'" : " at the end of the tag"));
  }
  Result<std::string> ExpectName() {
    if (!Peek() || Peek()->type != TT::kName) return ErrorHere("expected a name");
    return (*toks_)[ti_++].text;
  }
  Status ExpectEnd() {
    if (Peek()) return ErrorHere("unexpected '" + Peek()->text + "'");
    return Status::OK();
  }
  void Enter(const Chunk& c) {
    toks_ = &c.tokens;
    ti_ = 0;
    chunk_line_ = c.line;
  }

  // A node of kind `k` whose args are `args` (null ones included), in order.
  template <typename... A>
  static ExprPtr Node(Expr::Kind k, int line, A&&... args) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->line = line;
    (e->args.push_back(std::forward<A>(args)), ...);
    return e;
  }

  // The parser's recursion (nested brackets, chains of `not`, unary signs and conditionals) is
  // bounded so that a hostile template cannot overflow its stack: one Nesting per level.
  class Nesting {
   public:
    explicit Nesting(Parser* p) : p_(p) { ++p_->depth_; }
    ~Nesting() { --p_->depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;
    Status status() const {
      return p_->depth_ > 3 * kMaxDepth ? p_->ErrorHere("expressions nested too deeply")
                                        : Status::OK();
    }

   private:
    Parser* p_;
  };

  // Sets e->height from its children's (each already set) and refuses a tree taller than
  // kMaxDepth: chains (`x.a.b...`, `x|f|g...`, `a ~ b ~ ...`) are parsed in loops but rendered
  // and freed recursively, so their height is bounded as the parser's recursion is.
  Status Grown(Expr* e) const {
    int h = 0;
    for (const ExprPtr& a : e->args) h = a ? std::max(h, a->height) : h;
    for (const auto& kv : e->kwargs) h = std::max(h, kv.second->height);
    e->height = h + 1;
    if (e->height > kMaxDepth) return Error("expressions nested too deeply", e->line);
    return Status::OK();
  }

  // --- statements ---
  // Parses statements until one whose keyword is in `enders` (left unconsumed, its name in
  // *ended), or the end of the template (only when `enders` is empty).
  Result<Body> ParseBody(std::initializer_list<const char*> enders, std::string* ended) {
    Body body;
    while (ci_ < chunks_.size()) {
      const Chunk& c = chunks_[ci_];
      if (c.kind == Chunk::Kind::kText) {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::kText;
        s->line = c.line;
        s->text = c.text;
        body.push_back(std::move(s));
        ++ci_;
        continue;
      }
      Enter(c);
      if (c.kind == Chunk::Kind::kOutput) {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::kOutput;
        s->line = c.line;
        STOKER_ASSIGN_OR_RETURN(s->expr, ParseTuple());
        STOKER_RETURN_IF_ERROR(ExpectEnd());
        body.push_back(std::move(s));
        ++ci_;
        continue;
      }
      if (c.tokens.empty() || c.tokens[0].type != TT::kName) {
        return Error("a statement must start with a keyword", c.line);
      }
      const std::string& kw = c.tokens[0].text;
      for (const char* e : enders) {
        if (kw == e) {
          *ended = kw;
          return body;
        }
      }
      ++ti_;
      ++ci_;
      STOKER_ASSIGN_OR_RETURN(auto s, ParseStatement(kw, c.line));
      body.push_back(std::move(s));
    }
    if (enders.size() != 0) {
      std::string want;
      for (const char* e : enders) want += std::string(want.empty() ? "" : " or ") + e;
      return Error("the template ended where " + want + " was expected", open_line_);
    }
    return body;
  }

  // Consumes the ender tag at chunks_[ci_] (already matched by ParseBody).
  Status EndTag() {
    Enter(chunks_[ci_]);
    ++ti_;
    ++ci_;
    return ExpectEnd();
  }

  Result<std::unique_ptr<Stmt>> ParseStatement(const std::string& kw, int line) {
    if (++block_depth_ > kMaxDepth) return Error("blocks nested too deeply", line);
    Result<std::unique_ptr<Stmt>> s = ParseStatementInner(kw, line);
    --block_depth_;
    return s;
  }

  Result<std::unique_ptr<Stmt>> ParseStatementInner(const std::string& kw, int line) {
    auto s = std::make_unique<Stmt>();
    s->line = line;
    int saved_open = open_line_;
    open_line_ = line;
    std::string ended;
    if (kw == "if") {
      s->kind = Stmt::Kind::kIf;
      STOKER_ASSIGN_OR_RETURN(ExprPtr cond, ParseExpression(true));
      STOKER_RETURN_IF_ERROR(ExpectEnd());
      while (true) {
        STOKER_ASSIGN_OR_RETURN(Body b, ParseBody({"elif", "else", "endif"}, &ended));
        s->branches.emplace_back(std::move(cond), std::move(b));
        if (ended == "elif") {
          Enter(chunks_[ci_++]);
          ++ti_;
          STOKER_ASSIGN_OR_RETURN(cond, ParseExpression(true));
          STOKER_RETURN_IF_ERROR(ExpectEnd());
          continue;
        }
        if (ended == "else") {
          STOKER_RETURN_IF_ERROR(EndTag());
          STOKER_ASSIGN_OR_RETURN(s->else_body, ParseBody({"endif"}, &ended));
        }
        break;
      }
      STOKER_RETURN_IF_ERROR(EndTag());
    } else if (kw == "for") {
      s->kind = Stmt::Kind::kFor;
      do {
        STOKER_ASSIGN_OR_RETURN(std::string t, ExpectName());
        s->targets.push_back(t);
      } while (Accept(","));
      if (!AcceptName("in")) return ErrorHere("expected 'in' in a for loop");
      STOKER_ASSIGN_OR_RETURN(s->expr, ParseTuple(false));
      if (AcceptName("if")) {
        STOKER_ASSIGN_OR_RETURN(s->cond, ParseExpression(true));
      }
      if (IsName("recursive")) return ErrorHere("recursive for loops are not supported");
      STOKER_RETURN_IF_ERROR(ExpectEnd());
      STOKER_ASSIGN_OR_RETURN(s->body, ParseBody({"else", "endfor"}, &ended));
      if (ended == "else") {
        STOKER_RETURN_IF_ERROR(EndTag());
        STOKER_ASSIGN_OR_RETURN(s->else_body, ParseBody({"endfor"}, &ended));
      }
      STOKER_RETURN_IF_ERROR(EndTag());
    } else if (kw == "set") {
      STOKER_ASSIGN_OR_RETURN(std::string t, ExpectName());
      s->targets.push_back(t);
      if (Accept(".")) {
        STOKER_ASSIGN_OR_RETURN(s->attr, ExpectName());
      } else {
        while (Accept(",")) {
          STOKER_ASSIGN_OR_RETURN(std::string more, ExpectName());
          s->targets.push_back(more);
        }
      }
      if (Accept("=")) {
        s->kind = Stmt::Kind::kSet;
        STOKER_ASSIGN_OR_RETURN(s->expr, ParseTuple());
        STOKER_RETURN_IF_ERROR(ExpectEnd());
      } else {
        if (s->targets.size() != 1 || !s->attr.empty()) {
          return ErrorHere("a block set assigns one plain name");
        }
        if (Peek()) return ErrorHere("filters on a block set are not supported");
        s->kind = Stmt::Kind::kSetBlock;
        STOKER_ASSIGN_OR_RETURN(s->body, ParseBody({"endset"}, &ended));
        STOKER_RETURN_IF_ERROR(EndTag());
      }
    } else if (kw == "macro") {
      s->kind = Stmt::Kind::kMacro;
      STOKER_ASSIGN_OR_RETURN(s->name, ExpectName());
      STOKER_RETURN_IF_ERROR(Expect("("));
      while (!IsOp(")")) {
        STOKER_ASSIGN_OR_RETURN(std::string p, ExpectName());
        ExprPtr def;
        if (Accept("=")) {
          STOKER_ASSIGN_OR_RETURN(def, ParseExpression(true));
        }
        s->params.emplace_back(p, std::move(def));
        if (!Accept(",")) break;
      }
      STOKER_RETURN_IF_ERROR(Expect(")"));
      STOKER_RETURN_IF_ERROR(ExpectEnd());
      STOKER_ASSIGN_OR_RETURN(s->body, ParseBody({"endmacro"}, &ended));
      STOKER_RETURN_IF_ERROR(EndTag());
    } else if (kw == "generation") {
      s->kind = Stmt::Kind::kGeneration;
      STOKER_RETURN_IF_ERROR(ExpectEnd());
      STOKER_ASSIGN_OR_RETURN(s->body, ParseBody({"endgeneration"}, &ended));
      STOKER_RETURN_IF_ERROR(EndTag());
    } else if (kw == "break" || kw == "continue") {
      s->kind = kw == "break" ? Stmt::Kind::kBreak : Stmt::Kind::kContinue;
      STOKER_RETURN_IF_ERROR(ExpectEnd());
    } else if (kw.rfind("end", 0) == 0 || kw == "elif" || kw == "else") {
      return Error("unexpected {% " + kw + " %}", line);
    } else {
      return Error("the statement '" + kw + "' is not supported by stoker's chat renderer", line);
    }
    open_line_ = saved_open;
    return s;
  }

  // --- expressions (jinja2's grammar and precedence) ---
  Result<ExprPtr> ParseTuple(bool with_cond = true) {
    int line = Line();
    STOKER_ASSIGN_OR_RETURN(ExprPtr first, ParseExpression(with_cond));
    if (!IsOp(",")) return first;
    auto t = Node(Expr::Kind::kTuple, line, std::move(first));
    while (Accept(",")) {
      if (!Peek()) break;
      STOKER_ASSIGN_OR_RETURN(ExprPtr e, ParseExpression(with_cond));
      t->args.push_back(std::move(e));
    }
    STOKER_RETURN_IF_ERROR(Grown(t.get()));
    return t;
  }

  Result<ExprPtr> ParseExpression(bool with_cond) {
    Nesting nesting(this);
    STOKER_RETURN_IF_ERROR(nesting.status());
    int line = Line();
    STOKER_ASSIGN_OR_RETURN(ExprPtr e, ParseOr());
    while (with_cond && AcceptName("if")) {
      STOKER_ASSIGN_OR_RETURN(ExprPtr test, ParseOr());
      ExprPtr other;
      if (AcceptName("else")) {
        STOKER_ASSIGN_OR_RETURN(other, ParseExpression(true));
      }
      e = Node(Expr::Kind::kCond, line, std::move(e), std::move(test), std::move(other));
      STOKER_RETURN_IF_ERROR(Grown(e.get()));
    }
    return e;
  }

  Result<ExprPtr> ParseOr() { return ParseBinaryLevel({"or"}, &Parser::ParseAnd, Expr::Kind::kOr); }
  Result<ExprPtr> ParseAnd() {
    return ParseBinaryLevel({"and"}, &Parser::ParseNot, Expr::Kind::kAnd);
  }

  Result<ExprPtr> ParseNot() {
    if (IsName("not")) {
      Nesting nesting(this);
      STOKER_RETURN_IF_ERROR(nesting.status());
      auto n = Node(Expr::Kind::kUnary, Line());
      n->name = "not";
      ++ti_;
      STOKER_ASSIGN_OR_RETURN(ExprPtr x, ParseNot());
      n->args.push_back(std::move(x));
      STOKER_RETURN_IF_ERROR(Grown(n.get()));
      return n;
    }
    return ParseCompare();
  }

  Result<ExprPtr> ParseCompare() {
    int line = Line();
    STOKER_ASSIGN_OR_RETURN(ExprPtr e, ParseMath1());
    ExprPtr cmp;
    while (true) {
      std::string op;
      const Token* t = Peek();
      if (t && t->type == TT::kOp &&
          (t->text == "==" || t->text == "!=" || t->text == "<" || t->text == ">" ||
           t->text == "<=" || t->text == ">=")) {
        op = t->text;
        ++ti_;
      } else if (AcceptName("in")) {
        op = "in";
      } else if (IsName("not") && IsName("in", 1)) {
        op = "notin";
        ti_ += 2;
      } else {
        break;
      }
      if (!cmp) cmp = Node(Expr::Kind::kCompare, line, std::move(e));
      STOKER_ASSIGN_OR_RETURN(ExprPtr r, ParseMath1());
      cmp->ops.push_back(op);
      cmp->args.push_back(std::move(r));
    }
    if (!cmp) return e;
    STOKER_RETURN_IF_ERROR(Grown(cmp.get()));
    return cmp;
  }

  // One left-associative level: operators (or keywords, for and/or) in `ops` over `next`.
  template <typename Next>
  Result<ExprPtr> ParseBinaryLevel(std::initializer_list<const char*> ops, Next next,
                                   Expr::Kind kind = Expr::Kind::kBinary) {
    STOKER_ASSIGN_OR_RETURN(ExprPtr e, (this->*next)());
    while (true) {
      const char* found = nullptr;
      for (const char* op : ops) {
        if (IsOp(op) || IsName(op)) found = op;
      }
      if (!found) return e;
      int line = Line();
      ++ti_;
      STOKER_ASSIGN_OR_RETURN(ExprPtr r, (this->*next)());
      e = Node(kind, line, std::move(e), std::move(r));
      e->name = found;
      STOKER_RETURN_IF_ERROR(Grown(e.get()));
    }
  }
  Result<ExprPtr> ParseMath1() { return ParseBinaryLevel({"+", "-"}, &Parser::ParseConcat); }
  Result<ExprPtr> ParseConcat() { return ParseBinaryLevel({"~"}, &Parser::ParseMath2); }
  Result<ExprPtr> ParseMath2() {
    return ParseBinaryLevel({"*", "/", "//", "%"}, &Parser::ParsePow);
  }
  Result<ExprPtr> ParsePow() { return ParseBinaryLevel({"**"}, &Parser::ParseUnaryFiltered); }
  Result<ExprPtr> ParseUnaryFiltered() { return ParseUnary(true); }

  Result<ExprPtr> ParseUnary(bool with_filter) {
    ExprPtr e;
    if (IsOp("-") || IsOp("+")) {
      Nesting nesting(this);
      STOKER_RETURN_IF_ERROR(nesting.status());
      e = Node(Expr::Kind::kUnary, Line());
      e->name = Peek()->text;
      ++ti_;
      STOKER_ASSIGN_OR_RETURN(ExprPtr x, ParseUnary(false));
      e->args.push_back(std::move(x));
      STOKER_RETURN_IF_ERROR(Grown(e.get()));
    } else {
      STOKER_ASSIGN_OR_RETURN(e, ParsePrimary());
    }
    STOKER_ASSIGN_OR_RETURN(e, ParsePostfix(std::move(e)));
    if (with_filter) return ParseFilterExpr(std::move(e));
    return e;
  }

  Result<ExprPtr> ParsePrimary() {
    Nesting nesting(this);
    STOKER_RETURN_IF_ERROR(nesting.status());
    Result<ExprPtr> e = ParsePrimaryInner();
    if (e.ok()) STOKER_RETURN_IF_ERROR(Grown(e->get()));
    return e;
  }

  Result<ExprPtr> ParsePrimaryInner() {
    const Token* t = Peek();
    if (!t) return ErrorHere("expected an expression");
    int line = t->line;
    if (t->type == TT::kName) {
      ++ti_;
      const std::string& n = t->text;
      auto lit = Node(Expr::Kind::kLiteral, line);
      if (n == "true" || n == "True") {
        lit->literal = Value::Bool(true);
      } else if (n == "false" || n == "False") {
        lit->literal = Value::Bool(false);
      } else if (n == "none" || n == "None") {
        lit->literal = Value::None();
      } else {
        auto name = Node(Expr::Kind::kName, line);
        name->name = n;
        return name;
      }
      return lit;
    }
    if (t->type == TT::kString) {
      std::string s;
      while (Peek() && Peek()->type == TT::kString) s += (*toks_)[ti_++].text;
      auto lit = Node(Expr::Kind::kLiteral, line);
      lit->literal = Value::String(std::move(s));
      return lit;
    }
    if (t->type == TT::kInt || t->type == TT::kFloat) {
      ++ti_;
      auto lit = Node(Expr::Kind::kLiteral, line);
      lit->literal = t->type == TT::kInt ? Value::Int(t->int_value) : Value::Float(t->float_value);
      return lit;
    }
    if (Accept("(")) {
      if (Accept(")")) return Node(Expr::Kind::kTuple, line);
      STOKER_ASSIGN_OR_RETURN(ExprPtr first, ParseExpression(true));
      if (Accept(")")) return first;
      auto tup = Node(Expr::Kind::kTuple, line, std::move(first));
      while (Accept(",")) {
        if (IsOp(")")) break;
        STOKER_ASSIGN_OR_RETURN(ExprPtr e, ParseExpression(true));
        tup->args.push_back(std::move(e));
      }
      STOKER_RETURN_IF_ERROR(Expect(")"));
      return tup;
    }
    if (Accept("[")) {
      auto list = Node(Expr::Kind::kList, line);
      while (!IsOp("]")) {
        STOKER_ASSIGN_OR_RETURN(ExprPtr e, ParseExpression(true));
        list->args.push_back(std::move(e));
        if (!Accept(",")) break;
      }
      STOKER_RETURN_IF_ERROR(Expect("]"));
      return list;
    }
    if (Accept("{")) {
      auto dict = Node(Expr::Kind::kDict, line);
      while (!IsOp("}")) {
        STOKER_ASSIGN_OR_RETURN(ExprPtr k, ParseExpression(true));
        STOKER_RETURN_IF_ERROR(Expect(":"));
        STOKER_ASSIGN_OR_RETURN(ExprPtr v, ParseExpression(true));
        dict->args.push_back(std::move(k));
        dict->args.push_back(std::move(v));
        if (!Accept(",")) break;
      }
      STOKER_RETURN_IF_ERROR(Expect("}"));
      return dict;
    }
    return ErrorHere("unexpected '" + t->text + "'");
  }

  Status ParseArgs(Expr* call) {
    // The '(' is consumed; reads args and kwargs through ')'.
    while (!IsOp(")")) {
      if (Peek() && Peek()->type == TT::kName && IsOp("=", 1)) {
        std::string k = Peek()->text;
        ti_ += 2;
        STOKER_ASSIGN_OR_RETURN(ExprPtr v, ParseExpression(true));
        call->kwargs.emplace_back(k, std::move(v));
      } else {
        if (IsOp("*") || IsOp("**")) return ErrorHere("*args and **kwargs are not supported");
        STOKER_ASSIGN_OR_RETURN(ExprPtr v, ParseExpression(true));
        call->args.push_back(std::move(v));
      }
      if (!Accept(",")) break;
    }
    return Expect(")");
  }

  Result<ExprPtr> ParsePostfix(ExprPtr e) {
    while (true) {
      int line = Line();
      if (Accept(".")) {
        const Token* t = Peek();
        if (!t || (t->type != TT::kName && t->type != TT::kInt)) {
          return ErrorHere("expected an attribute name after '.'");
        }
        ++ti_;
        if (t->type == TT::kInt) {
          auto idx = Node(Expr::Kind::kLiteral, line);
          idx->literal = Value::Int(t->int_value);
          e = Node(Expr::Kind::kItem, line, std::move(e), std::move(idx));
        } else {
          e = Node(Expr::Kind::kAttr, line, std::move(e));
          e->name = t->text;
        }
      } else if (Accept("[")) {
        ExprPtr start, stop, step;
        bool slice = false;
        if (!IsOp(":")) {
          STOKER_ASSIGN_OR_RETURN(start, ParseExpression(true));
        }
        if (Accept(":")) {
          slice = true;
          if (!IsOp("]") && !IsOp(":")) {
            STOKER_ASSIGN_OR_RETURN(stop, ParseExpression(true));
          }
          if (Accept(":")) {
            if (!IsOp("]")) {
              STOKER_ASSIGN_OR_RETURN(step, ParseExpression(true));
            }
          }
        }
        STOKER_RETURN_IF_ERROR(Expect("]"));
        e = slice ? Node(Expr::Kind::kSlice, line, std::move(e), std::move(start), std::move(stop),
                         std::move(step))
                  : Node(Expr::Kind::kItem, line, std::move(e), std::move(start));
      } else if (Accept("(")) {
        e = Node(Expr::Kind::kCall, line, std::move(e));
        STOKER_RETURN_IF_ERROR(ParseArgs(e.get()));
      } else {
        return e;
      }
      STOKER_RETURN_IF_ERROR(Grown(e.get()));
    }
  }

  Result<ExprPtr> ParseFilterExpr(ExprPtr e) {
    while (true) {
      int line = Line();
      if (Accept("|")) {
        STOKER_ASSIGN_OR_RETURN(std::string name, ExpectName());
        if (!IsKnownFilter(name)) {
          return Error("the filter '" + name + "' is not supported by stoker's chat renderer",
                       line);
        }
        e = Node(Expr::Kind::kFilter, line, std::move(e));
        e->name = name;
        if (Accept("(")) {
          STOKER_RETURN_IF_ERROR(ParseArgs(e.get()));
        }
        STOKER_RETURN_IF_ERROR(Grown(e.get()));
      } else if (AcceptName("is")) {
        e = Node(Expr::Kind::kTest, line, std::move(e));
        e->negated = AcceptName("not");
        STOKER_ASSIGN_OR_RETURN(e->name, ExpectName());
        if (!IsKnownTest(e->name)) {
          return Error("the test '" + e->name + "' is not supported by stoker's chat renderer",
                       line);
        }
        const Token* t = Peek();
        if (Accept("(")) {
          STOKER_RETURN_IF_ERROR(ParseArgs(e.get()));
        } else if (t &&
                   (t->type == TT::kName || t->type == TT::kString || t->type == TT::kInt ||
                    t->type == TT::kFloat || IsOp("[") || IsOp("{")) &&
                   !IsName("else") && !IsName("or") && !IsName("and")) {
          STOKER_ASSIGN_OR_RETURN(ExprPtr arg, ParsePrimary());
          STOKER_ASSIGN_OR_RETURN(arg, ParsePostfix(std::move(arg)));
          e->args.push_back(std::move(arg));
        }
        STOKER_RETURN_IF_ERROR(Grown(e.get()));
      } else {
        return e;
      }
    }
  }

  const std::vector<Chunk>& chunks_;
  const std::string& name_;
  size_t ci_ = 0;
  const std::vector<Token>* toks_ = nullptr;
  size_t ti_ = 0;
  int chunk_line_ = 0;
  int open_line_ = 0;
  int depth_ = 0;
  int block_depth_ = 0;
  static constexpr int kMaxDepth = 200;
};

}  // namespace

Result<Body> Parse(std::string_view source, const std::string& template_name) {
  STOKER_ASSIGN_OR_RETURN(std::vector<Chunk> chunks, Lex(source, template_name));
  return Parser(chunks, template_name).ParseAll();
}

}  // namespace stoker::jinja
