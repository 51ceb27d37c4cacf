// The lexer of the Jinja subset: a template's text cut into literal text, `{{ ... }}` outputs
// and `{% ... %}` statements (comments dropped), each tag's contents cut into tokens. Whitespace
// control follows jinja2 as transformers configures it: trim_blocks and lstrip_blocks on, `-` and
// `+` modifiers, newlines normalised to "\n" and one trailing newline of the template dropped.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "stoker/status.h"

namespace stoker::jinja {

struct Token {
  enum class Type { kName, kString, kInt, kFloat, kOp };
  Type type;
  std::string text;  // the name, operator, or the string literal's decoded value
  int64_t int_value = 0;
  double float_value = 0;
  int line = 0;
};

struct Chunk {
  enum class Kind { kText, kOutput, kStatement };
  Kind kind;
  std::string text;           // kText
  std::vector<Token> tokens;  // kOutput, kStatement
  int line = 0;               // where the chunk starts (1-based)
};

// Cuts `source` into chunks. Errors (an unclosed tag or string, a character no token starts
// with) name `template_name` and the line.
Result<std::vector<Chunk>> Lex(std::string_view source, const std::string& template_name);

}  // namespace stoker::jinja
