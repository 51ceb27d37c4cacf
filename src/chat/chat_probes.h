// What the loss-mask rule (chat_spans.cc) learns from probe renderings of a template rather than
// from each conversation: the end-of-turn tokens, and, for templates whose generation prompt
// cannot depend on the messages, the text add_generation_prompt appends. Both depend only on the
// template, its special tokens and the extra variables (kwargs), so ChatTemplate keeps one set per
// kwargs. Thread-safe: ChatProbes is immutable; ChatProbeCache locks.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "chat/jinja_ast.h"

namespace stoker {

struct ChatProbes {
  std::vector<std::string> end_of_turn;  // the end-of-turn control tokens, first found first
  // The control tokens the probe writes between an assistant's text and the next user's (its end
  // of turn and the user header): never the end of a turn that ends otherwise.
  std::vector<std::string> between_turns;
  // What rendering any conversation with add_generation_prompt adds to its rendering without
  // (set only where GenerationPromptIgnoresMessages holds and the probe rendered): the header of
  // every assistant turn, for a conversation whose rendering succeeds. Unset: render each prefix.
  std::optional<std::string> generation_header;
};

// Whether add_generation_prompt can only append text that does not depend on the conversation:
// the name is read once, as the bare test of the template's last statement (text may follow),
// an `if` whose branches output only expressions of variables the template never assigns, besides
// messages, tools and documents, and call nothing. Then, for every conversation, the rendering
// with it is the rendering without it (same success) with one constant text swapped at the end.
bool GenerationPromptIgnoresMessages(const jinja::Body& body);

// Probes by kwargs (their JSON dump). Thread-safe.
class ChatProbeCache {
 public:
  std::shared_ptr<const ChatProbes> Find(const std::string& kwargs_key) const;
  // Stores `probes` unless probes for the key are there; returns those kept.
  std::shared_ptr<const ChatProbes> Put(const std::string& kwargs_key,
                                        std::shared_ptr<const ChatProbes> probes);

 private:
  static constexpr size_t kMaxEntries = 64;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const ChatProbes>> by_kwargs_;  // guarded by mu_
};

}  // namespace stoker
