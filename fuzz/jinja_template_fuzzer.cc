// libFuzzer target: the chat-template parser and renderer (src/chat/jinja_*). Any input either
// fails to parse with an error, or renders (or fails to render) a fixed conversation with an
// error; neither may crash. The generation spans it reports must lie inside its text.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "chat/jinja_template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view source(reinterpret_cast<const char*>(data), size);
  auto t = stoker::jinja::Template::Parse(source, "fuzz.jinja");
  if (!t.ok()) return 0;
  static const auto* context = new stoker::jinja::Value(stoker::jinja::Value::FromJson(
      nlohmann::ordered_json::parse(R"({"messages": [{"role": "system", "content": " S "},
        {"role": "user", "content": "Hé <|im_end|>"}, {"role": "assistant", "content": "A",
        "tool_calls": [{"function": {"name": "f", "arguments": {"x": [1, 2.5, null]}}}]}],
        "tools": null, "add_generation_prompt": true, "bos_token": "<s>"})")));
  auto out = t->Render(context->dict());
  if (!out.ok()) return 0;
  for (const auto& [b, e] : out->generation_spans) {
    if (b > e || e > out->text.size()) __builtin_trap();
  }
  return 0;
}
