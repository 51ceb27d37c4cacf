// stoker.ChatTemplate and Tokenizer.apply_chat_template: a model's chat template rendered in C++
// (src/chat/chat_template.h), its loss-mask spans, and the ids and mask of a conversation. The
// conversation crosses as JSON text (json.dumps keeps key order). The GIL is released while
// rendering and encoding.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/chat_encode.h"
#include "chat/chat_encoder.h"
#include "chat/chat_template.h"
#include "register.h"

namespace nb = nanobind;

namespace stoker::python {
namespace {

using json = nlohmann::ordered_json;

struct PyChatTemplate {
  std::shared_ptr<const ChatTemplate> chat;
};

json ParseJson(const std::string& text, const char* what) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) throw nb::value_error((std::string(what) + " is not JSON").c_str());
  return j;
}

PyChatTemplate Open(const std::string& path, const std::string& config_dir) {
  return PyChatTemplate{std::make_shared<const ChatTemplate>(Released([&] {
    if (std::filesystem::is_directory(path)) return ChatTemplate::FromModelDir(path);
    return ChatTemplate::FromFile(path, config_dir);
  }))};
}

Conversation ToConversation(const std::string& record_json) {
  return Unwrap(ParseConversation(ParseJson(record_json, "the conversation")));
}

std::string Render(const PyChatTemplate& t, const std::string& record_json,
                   bool add_generation_prompt, const std::string& kwargs_json) {
  Conversation conv = ToConversation(record_json);
  json kwargs = ParseJson(kwargs_json, "kwargs");
  return Released([&] { return t.chat->Render(conv, add_generation_prompt, kwargs); }).text;
}

std::pair<std::string, std::vector<std::pair<size_t, size_t>>> Spans(
    const PyChatTemplate& t, const std::string& record_json, const std::string& train_on,
    const std::string& kwargs_json) {
  Conversation conv = ToConversation(record_json);
  json kwargs = ParseJson(kwargs_json, "kwargs");
  TrainOn which = Unwrap(ParseTrainOn(train_on));
  ChatSpans spans = Released([&] { return t.chat->Spans(conv, which, kwargs); });
  return {std::move(spans.text), std::move(spans.trained)};
}

struct PyChatEncoder {
  std::shared_ptr<const ChatEncoder> encoder;
};

PyChatEncoder OpenEncoder(const std::string& tokenizer, const std::string& chat_template,
                          const TokenizerOptions& options) {
  ChatEncoderOptions o;
  o.tokenizer = tokenizer;
  o.chat_template = chat_template;
  o.tokenizer_options = options;
  return PyChatEncoder{Released([&] { return ChatEncoder::Open(o); })};
}

std::pair<std::vector<int32_t>, std::vector<uint8_t>> Encode(const PyChatEncoder& e,
                                                             const std::string& record_json,
                                                             const std::string& train_on,
                                                             const std::string& kwargs_json) {
  json record = ParseJson(record_json, "the conversation");
  json kwargs = ParseJson(kwargs_json, "kwargs");
  TrainOn which = Unwrap(ParseTrainOn(train_on));
  ChatIds ids = Released([&] { return e.encoder->Encode(std::move(record), which, kwargs); });
  return {std::move(ids.ids), std::move(ids.mask)};
}

}  // namespace

void RegisterChat(nb::module_& m) {
  nb::class_<PyChatTemplate>(m, "_ChatTemplate")
      .def_prop_ro("has_generation",
                   [](const PyChatTemplate& t) { return t.chat->jinja().has_generation(); })
      .def("render", &Render, nb::arg("record_json"), nb::arg("add_generation_prompt"),
           nb::arg("kwargs_json"))
      .def("spans", &Spans, nb::arg("record_json"), nb::arg("train_on"), nb::arg("kwargs_json"));
  m.def("_chat_template", &Open, nb::arg("path"), nb::arg("config_dir") = "");
  // Tokenizer.apply_chat_template: `stoker pack`'s encoder (chat/chat_encoder.h).
  nb::class_<PyChatEncoder>(m, "_ChatEncoder")
      .def("encode", &Encode, nb::arg("record_json"), nb::arg("train_on"), nb::arg("kwargs_json"));
  m.def("_chat_encoder", &OpenEncoder, nb::arg("tokenizer"), nb::arg("chat_template"),
        nb::arg("options"));
}

}  // namespace stoker::python
