// ChatTemplate: a model's own chat template (docs/chat.md), rendered as transformers'
// apply_chat_template(..., tokenize=False) renders it, and the loss-mask rule: which bytes of the
// rendered text a model learns (--train-on assistant|last|completion|all).
//
// A conversation arrives as one JSON record: OpenAI `messages` (+ `tools`), `prompt` +
// `completion`, or ShareGPT `conversations`. Immutable after loading; Render and Spans are
// thread-safe.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat/chat_probes.h"
#include "chat/jinja_template.h"
#include "stoker/status.h"

namespace stoker {

// The invisible markers (private-use U+F0000 and U+F0001) around a control token's text that came
// from the conversation, so that it stays ordinary text when tokenized (chat_encode.h).
inline constexpr char kChatMarkStart[] = "\xf3\xb0\x80\x80";
inline constexpr char kChatMarkEnd[] = "\xf3\xb0\x80\x81";

enum class TrainOn { kAssistant, kLast, kCompletion, kAll };
Result<TrainOn> ParseTrainOn(std::string_view name);

// A conversation in the shape templates read: messages (each role system/user/assistant/tool),
// tools (null when none), and which messages are trained under kCompletion.
struct Conversation {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools;       // null or a list
  nlohmann::ordered_json documents;   // null or a list (retrieval templates' `documents`)
  std::vector<bool> completion;       // per message: part of the completion
  bool is_prompt_completion = false;  // from prompt + completion
};

// Reads a record: `messages` (OpenAI), `conversations` (ShareGPT {from, value}) or `prompt` +
// `completion` (strings or lists of messages), with `tools` and `documents` when given; `field`
// names the field when not empty. Checks the nesting depth (CheckJsonDepth), roles, content
// shapes and that an assistant turn has content (maybe "") or tool calls. The record is taken
// by value: its messages are moved into the conversation, not copied.
Result<Conversation> ParseConversation(nlohmann::ordered_json record, std::string_view field = {});

struct ChatSpans {
  std::string text;                                // the rendered conversation
  std::vector<std::pair<size_t, size_t>> trained;  // byte ranges of `text` that are learnt
};

class ChatTemplate {
 public:
  // From a model directory: chat_template.jinja, else tokenizer_config.json's chat_template
  // (a string, or a list of {name, template}: "default"). tokenizer_config.json (when present)
  // also gives bos_token, eos_token, ... and the special added tokens.
  static Result<ChatTemplate> FromModelDir(const std::string& dir);
  // From a template file (`--chat-template PATH`); `config_dir` (may be empty) gives the special
  // tokens from its tokenizer_config.json.
  static Result<ChatTemplate> FromFile(const std::string& path, const std::string& config_dir);
  static Result<ChatTemplate> FromString(std::string_view source, std::string name,
                                         nlohmann::ordered_json special_tokens,
                                         std::vector<std::string> control_tokens);

  // The text of `conv` as transformers renders it: messages without null-valued keys, the
  // reasoning aliased (reasoning_content/thinking), bos_token & co. and `kwargs` as variables.
  Result<jinja::RenderOutput> Render(const Conversation& conv, bool add_generation_prompt,
                                     const nlohmann::ordered_json& kwargs) const;
  // The rendered text and its trained byte ranges under `train_on` (the rule of docs/chat.md).
  // An error names the template when a trained turn's span cannot be determined unambiguously.
  Result<ChatSpans> Spans(const Conversation& conv, TrainOn train_on,
                          const nlohmann::ordered_json& kwargs) const;
  // Spans without the probes' generation header: each assistant turn's header is found by
  // rendering the messages before it with and without add_generation_prompt. The same result;
  // tests compare the two.
  Result<ChatSpans> SpansRenderingEveryPrefix(const Conversation& conv, TrainOn train_on,
                                              const nlohmann::ordered_json& kwargs) const;

  // Spans with the conversation always rendered as it is and with its markers, compared (Spans
  // takes the text from the marked rendering alone where that provably gives it). The same
  // result; tests compare the two.
  Result<ChatSpans> SpansRenderingTwice(const Conversation& conv, TrainOn train_on,
                                        const nlohmann::ordered_json& kwargs) const;

  // Renders like Render, with the control-token text inside the conversation's strings wrapped
  // in U+F0000 ... U+F0001 (as transformers' sanitize_control_tokens marks it).
  Result<std::string> RenderMarkedControlTokens(const Conversation& conv,
                                                const nlohmann::ordered_json& kwargs) const;
  // Whether RenderMarkedControlTokens can differ from Render: a string of the conversation or of
  // `kwargs` holds a control token's text or a mark. When not, it marks nothing.
  bool NeedsControlTokenMarks(const Conversation& conv, const nlohmann::ordered_json& kwargs) const;

  const jinja::Template& jinja() const { return *template_; }
  // XXH3 of the template's source and its special tokens (bos_token & co.): equal for two
  // templates that render alike.
  uint64_t source_hash() const { return source_hash_; }
  // Special tokens (text) the template's output counts as control tokens.
  const std::vector<std::string>& control_tokens() const { return control_tokens_; }

 private:
  // The end-of-turn tokens; *between: the control tokens between an assistant's text and the
  // next user's text in the probe.
  std::vector<std::string> EndOfTurnTokens(const nlohmann::ordered_json& kwargs,
                                           std::vector<std::string>* between) const;
  // The probes for `kwargs`, rendered on first use and kept (chat_probes.h).
  std::shared_ptr<const ChatProbes> Probes(const nlohmann::ordered_json& kwargs) const;
  Result<ChatSpans> SpansImpl(const Conversation& conv, TrainOn train_on,
                              const nlohmann::ordered_json& kwargs, bool header_shortcut,
                              bool one_render) const;
  // Where the rendering of messages 0..i-1 ends in `text` (the full rendering), given `lo`, the
  // end of their last written text there: nullopt when what follows it differs (chat_spans.cc).
  std::optional<size_t> EndOfPrefix(const Conversation& conv, size_t i, size_t lo,
                                    const std::string& text,
                                    const nlohmann::ordered_json& kwargs) const;
  // Whether a template's source or special tokens could write a span marker (chat_spans.cc).
  static bool MayWriteSpanMarkers(std::string_view text);

  std::shared_ptr<const jinja::Template> template_;
  // Shared by copies, which render alike; a template parsed anew gets its own.
  std::shared_ptr<ChatProbeCache> probes_ = std::make_shared<ChatProbeCache>();
  bool generation_prompt_ignores_messages_ = false;
  // Neither the source nor the special tokens can write a span marker: Spans may render once.
  bool marker_free_source_ = false;
  nlohmann::ordered_json special_tokens_;  // {"bos_token": "<s>", ...}
  std::vector<std::string> control_tokens_;
  uint64_t source_hash_ = 0;
};

}  // namespace stoker
