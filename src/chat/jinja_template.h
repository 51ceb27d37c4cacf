// A chat template: a Jinja template parsed once (the subset real chat templates use) and
// rendered as transformers renders it (jinja2's ImmutableSandboxedEnvironment with trim_blocks,
// lstrip_blocks, loop controls, {% generation %} markers; the globals raise_exception,
// strftime_now, namespace, dict and range; tojson without HTML escaping).
// A construct outside the subset is an error naming the template and line, at parse time where
// it can be seen there (statements, filters, tests), else when it is reached.
// Immutable after Parse; Render is thread-safe (each call has its own state).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/jinja_ast.h"
#include "chat/jinja_value.h"
#include "stoker/status.h"

namespace stoker::jinja {

struct RenderOutput {
  std::string text;
  // Byte ranges [begin, end) of `text` that {% generation %} blocks wrote, in order.
  std::vector<std::pair<size_t, size_t>> generation_spans;
};

// Bounds on one rendering (docs/chat.md, "The Jinja subset"), so that a hostile template or
// conversation is an error naming the template and line, never a crash or a render that does not
// end. Any one string or list a template builds is bounded too (kMaxValueSize, jinja_value.h).
struct RenderLimits {
  int64_t max_steps = 10'000'000;  // expressions, statements, loop iterations: seconds of work
  size_t max_output_bytes = size_t(256) << 20;  // the text (and a macro's or block set's)
  int max_depth = 300;  // expressions, blocks and macro calls open at once (the stack)
};

class Template {
 public:
  // `name` (a path, or "tokenizer_config.json") is the name errors give.
  static Result<Template> Parse(std::string_view source, std::string name);

  // Renders with `context` as the template's variables (beside the globals). Past a bound of
  // `limits`, or out of memory, the rendering is an error.
  Result<RenderOutput> Render(const Dict& context, const RenderLimits& limits = {}) const;

  const std::string& name() const { return name_; }
  // Whether the template has {% generation %} blocks.
  bool has_generation() const { return has_generation_; }
  const Body& body() const { return *body_; }

 private:
  std::string name_;
  std::shared_ptr<const Body> body_;
  bool has_generation_ = false;
};

}  // namespace stoker::jinja
