// The syntax tree of a parsed chat template: expressions and statements of the Jinja subset
// (jinja_parser.h builds it, jinja_render.h walks it). Immutable once built; thread-safe to read.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/jinja_value.h"

namespace stoker::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    kLiteral,  // literal
    kName,     // name
    kList,     // args: items
    kTuple,    // args: items
    kDict,     // args: key, value, key, value, ...
    kAttr,     // args[0].name
    kItem,     // args[0][args[1]]
    kSlice,    // args[0][args[1]:args[2]:args[3]], absent parts null
    kCall,     // args[0](args[1:], kwargs)
    kFilter,   // args[0] | name(args[1:], kwargs)
    kTest,     // args[0] is [not] name(args[1:])
    kUnary,    // name ("-", "+", "not") args[0]
    kBinary,   // args[0] name args[1]: + - * / // % ** ~
    kAnd,
    kOr,
    kCompare,  // args[0] ops[0] args[1] ops[1] args[2] ...
    kCond,     // args[0] if args[1] else args[2] (null: Undefined)
  };
  Kind kind;
  int line = 0;
  Value literal;
  std::string name;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<std::string> ops;
  bool negated = false;
  int height = 1;  // of the tree under this node (the parser bounds it)
};

struct Stmt;
using Body = std::vector<std::unique_ptr<Stmt>>;

struct Stmt {
  enum class Kind {
    kText,        // text
    kOutput,      // {{ expr }}
    kIf,          // branches, else_body
    kFor,         // {% for targets in expr [if cond] %} body {% else %} else_body
    kSet,         // {% set targets = expr %} or {% set targets[0].attr = expr %}
    kSetBlock,    // {% set targets[0] %} body {% endset %}
    kMacro,       // {% macro name(params) %} body
    kGeneration,  // {% generation %} body {% endgeneration %}
    kBreak,
    kContinue,
  };
  Kind kind;
  int line = 0;
  std::string text;
  ExprPtr expr;
  ExprPtr cond;
  std::vector<std::string> targets;
  std::string attr;
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body;
  Body else_body;
  std::string name;
  std::vector<std::pair<std::string, ExprPtr>> params;  // a null default: required
};

}  // namespace stoker::jinja
