// The parser of the Jinja subset: chunks from jinja_lexer.h to a statement tree (jinja_ast.h).
// What it does not know (an unknown statement, filter or test; include, extends, call blocks)
// is an error naming the template and line, so that nothing renders silently different.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "chat/jinja_ast.h"
#include "stoker/status.h"

namespace stoker::jinja {

Result<Body> Parse(std::string_view source, const std::string& template_name);

}  // namespace stoker::jinja
