// The loss-mask rule of ChatTemplate::Spans (docs/chat.md, "Which tokens are trained").
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "chat/chat_template.h"
#include "chat/jinja_value.h"

namespace stoker {
namespace {

using json = nlohmann::ordered_json;

// Field markers: U+E000 <k> U+E001 before a message's text field, U+E002 <k> U+E003 after it.
const char kBegOpen[] = "\xee\x80\x80", kBegClose[] = "\xee\x80\x81";
const char kEndOpen[] = "\xee\x80\x82", kEndClose[] = "\xee\x80\x83";

bool AnyMarkers(const json& v) {
  if (v.is_string()) return jinja::HasSpanMarker(v.get_ref<const std::string&>());
  if (v.is_array() || v.is_object()) {
    for (const auto& e : v) {
      if (AnyMarkers(e)) return true;
    }
  }
  return false;
}

// AnyMarkers in object keys too: a key is written by a template's tojson or items() unread.
bool MarkersAnywhere(const json& v) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (jinja::HasSpanMarker(it.key()) || MarkersAnywhere(*it)) return true;
    }
    return false;
  }
  return AnyMarkers(v);
}

// Wraps the text between s's leading and trailing whitespace, so that a template's strip() or
// trim keeps the markers.
std::string Wrap(const std::string& s, size_t k) {
  if (s.empty()) return s;
  const size_t b = std::min(s.find_first_not_of(" \n\t\r"), s.size());
  const size_t e = std::max(s.find_last_not_of(" \n\t\r") + 1, b);
  std::string id = std::to_string(k);
  return s.substr(0, b) + kBegOpen + id + kBegClose + s.substr(b, e - b) + kEndOpen + id +
         kEndClose + s.substr(e);
}

// A marker's number: the message's index and which of its fields (content, a text part, the
// reasoning under each name) it wraps.
constexpr size_t kFieldsPerMessage = 64;

json MarkMessage(const json& m, size_t k) {
  json out = m;
  size_t field = 0;
  for (const char* f : {"reasoning_content", "thinking", "reasoning", "content"}) {
    if (!out.contains(f)) continue;
    json& v = out[f];
    if (v.is_string()) {
      v = Wrap(v.get<std::string>(), k * kFieldsPerMessage + field++);
    } else if (v.is_array()) {
      for (json& part : v) {
        if (part.is_object() && part.contains("text") && part["text"].is_string() &&
            field < kFieldsPerMessage) {
          part["text"] = Wrap(part["text"].get<std::string>(), k * kFieldsPerMessage + field++);
        }
      }
    }
  }
  return out;
}

// Marks each message as the first message equal to it: a template that compares messages
// (Mistral's `message == user_messages[-1]`) then sees equal messages as equal. *group lists,
// per first message, the messages equal to it, in order.
std::vector<json> MarkEqualAlike(const json& messages, std::vector<std::vector<size_t>>* group);

struct MarkerPos {
  std::optional<size_t> first;  // where the message's first marker sits in the clean text
  std::optional<size_t> last;   // where its last marker sits
  bool twice = false;           // one of its fields is written more than once
  std::vector<int> ends;        // per field: how many times its end marker was written
};

// Removes the markers from `marked`; records where each message's markers were. With `group`
// (messages marked by the number of the first message equal to them, MarkEqualAlike), the n-th
// time a field of a group is written is its n-th message's.
std::string Unmark(const std::string& marked, size_t n_messages, std::vector<MarkerPos>* pos,
                   const std::vector<std::vector<size_t>>* group = nullptr) {
  pos->assign(n_messages, MarkerPos{});
  // Per (message, field, begin or end): how many such markers were met, for `group`.
  std::map<std::tuple<size_t, size_t, bool>, size_t> seen;
  std::string out;
  out.reserve(marked.size());
  for (size_t i = 0; i < marked.size();) {
    // Every marker starts with the byte 0xEE: copy the text up to the next one at once.
    const size_t next = marked.find(kBegOpen[0], i);
    if (next != i) {
      const size_t stop = next == std::string::npos ? marked.size() : next;
      out.append(marked, i, stop - i);
      i = stop;
      continue;
    }
    bool beg = marked.compare(i, 3, kBegOpen) == 0, end = marked.compare(i, 3, kEndOpen) == 0;
    if (beg || end) {
      size_t j = i + 3;
      size_t k = 0;
      while (j < marked.size() && marked[j] >= '0' && marked[j] <= '9')
        k = k * 10 + (marked[j++] - '0');
      const char* close = beg ? kBegClose : kEndClose;
      if (marked.compare(j, 3, close) == 0 && k / kFieldsPerMessage < n_messages) {
        size_t m = k / kFieldsPerMessage;
        if (group != nullptr && !(*group)[m].empty()) {
          const std::vector<size_t>& members = (*group)[m];
          const size_t nth = seen[{m, k % kFieldsPerMessage, end}]++;
          m = members[std::min(nth, members.size() - 1)];
        }
        MarkerPos& p = (*pos)[m];
        if (!p.first) p.first = out.size();
        p.last = out.size();
        if (end) {
          size_t f = k % kFieldsPerMessage;
          if (p.ends.size() <= f) p.ends.resize(f + 1);
          p.twice |= ++p.ends[f] > 1;
        }
        i = j + 3;
        continue;
      }
    }
    out += marked[i++];
  }
  return out;
}

std::vector<json> MarkEqualAlike(const json& messages, std::vector<std::vector<size_t>>* group) {
  const size_t n = messages.size();
  group->assign(n, {});
  std::vector<json> out;
  for (size_t i = 0; i < n; ++i) {
    size_t first = i;
    for (size_t k = 0; k < i; ++k) {
      if (messages[k] == messages[i]) {
        first = k;
        break;
      }
    }
    (*group)[first].push_back(i);
    out.push_back(MarkMessage(messages[i], first));
  }
  return out;
}

// The text and the markers' positions from the marked rendering alone, where it provably gives the
// text of the plain one: the template read none of the marked strings' characters (it wrote them,
// concatenated them, tested them for emptiness; jinja::ReadWatch), and nothing else it renders
// can hold a marker (`source_ok`: its source and special tokens; here the messages with their
// keys, the tools and kwargs). A string passed on whole gives, markers removed, what the plain
// rendering gives in its place, and an empty string stays empty, so the two renderings take the
// same branches. Saves the plain rendering (half of a conversation's rendering time) for
// templates such as Qwen2.5's, Llama 3's and Phi-3.5's; std::nullopt otherwise.
std::optional<std::string> RenderOnce(const ChatTemplate& t, bool source_ok,
                                      const Conversation& conv, const Conversation& marked,
                                      const json& kwargs, std::vector<MarkerPos>* pos) {
  if (!source_ok || MarkersAnywhere(conv.messages) || MarkersAnywhere(conv.tools) ||
      MarkersAnywhere(kwargs)) {
    return std::nullopt;
  }
  jinja::ReadWatch watch;
  Result<jinja::RenderOutput> r = t.Render(marked, false, kwargs);
  if (!r.ok() || watch.seen()) return std::nullopt;
  return Unmark(r->text, conv.messages.size(), pos);
}

Status Refuse(const std::string& template_name, const std::string& why) {
  return InvalidArgument("cannot tell which tokens to train with chat template " + template_name +
                         ": " + why);
}

// Where `header` ends in `text`: after its longest prefix that keeps its first control token
// (any prefix when it has none) and lies between lo and text_at, the one nearest text_at.
std::optional<size_t> HeaderEnd(const std::string& text, const std::string& header, size_t lo,
                                size_t text_at, const std::vector<std::string>& control_tokens) {
  size_t min_len = 1;
  size_t first_control = std::string::npos;
  for (const std::string& t : control_tokens) {
    size_t p = header.find(t);
    if (p != std::string::npos && (first_control == std::string::npos || p < first_control)) {
      first_control = p;
      min_len = p + t.size();
    }
  }
  for (size_t len = header.size(); len >= min_len; --len) {
    // The last one that ends by text_at: a message's text may itself begin with the header
    // ("<start_of_turn>model\n..."), which a search from text_at would find and reject.
    if (len > text_at) continue;
    size_t p = text.rfind(header.substr(0, len), text_at - len);
    if (p != std::string::npos && p >= lo) return p + len;
  }
  return std::nullopt;
}

}  // namespace

bool ChatTemplate::MayWriteSpanMarkers(std::string_view text) {
  // Raw markers, or a string literal's \u, \U or \N escape, which could spell one.
  return jinja::HasSpanMarker(text) || text.find("\\u") != std::string_view::npos ||
         text.find("\\U") != std::string_view::npos || text.find("\\N") != std::string_view::npos;
}

std::vector<std::string> ChatTemplate::EndOfTurnTokens(const json& kwargs,
                                                       std::vector<std::string>* between) const {
  // A probe conversation: the first control token after an assistant's text, in the middle of a
  // conversation and at its end.
  Conversation probe;
  probe.messages =
      json::array({json{{"role", "user"}, {"content", Wrap("a", 0 * kFieldsPerMessage)}},
                   json{{"role", "assistant"}, {"content", Wrap("b", 1 * kFieldsPerMessage)}},
                   json{{"role", "user"}, {"content", Wrap("c", 2 * kFieldsPerMessage)}},
                   json{{"role", "assistant"}, {"content", Wrap("d", 3 * kFieldsPerMessage)}}});
  probe.completion.assign(4, false);
  std::vector<std::string> eot;
  Result<jinja::RenderOutput> r = Render(probe, false, kwargs);
  if (r.ok()) {
    std::vector<MarkerPos> pos;
    std::string text = Unmark(r->text, 4, &pos);
    auto first_control = [&](size_t from, size_t to) {
      std::optional<std::pair<size_t, std::string>> best;
      for (const std::string& t : control_tokens_) {
        size_t p = text.find(t, from);
        if (p != std::string::npos && p + t.size() <= to && (!best || p < best->first)) {
          best = std::make_pair(p, t);
        }
      }
      if (best && std::find(eot.begin(), eot.end(), best->second) == eot.end()) {
        eot.push_back(best->second);
      }
    };
    if (pos[1].last && pos[2].first) {
      first_control(*pos[1].last, *pos[2].first);
      for (const std::string& t : control_tokens_) {
        const size_t p = text.find(t, *pos[1].last);
        if (p != std::string::npos && p + t.size() <= *pos[2].first) between->push_back(t);
      }
    }
    if (pos[3].last) first_control(*pos[3].last, text.size());
  }
  if (eot.empty() && special_tokens_.contains("eos_token")) {
    eot.push_back(special_tokens_["eos_token"].get<std::string>());
  }
  return eot;
}

std::shared_ptr<const ChatProbes> ChatTemplate::Probes(const json& kwargs) const {
  const std::string key = kwargs.dump();
  if (std::shared_ptr<const ChatProbes> found = probes_->Find(key)) return found;
  // Threads that miss at once compute the same probes; the first stored is kept by all later.
  auto probes = std::make_shared<ChatProbes>();
  probes->end_of_turn = EndOfTurnTokens(kwargs, &probes->between_turns);
  if (generation_prompt_ignores_messages_) {
    Conversation probe;
    probe.messages = json::array({json{{"role", "user"}, {"content", "a"}}});
    probe.completion.assign(1, false);
    Result<jinja::RenderOutput> with = Render(probe, true, kwargs);
    Result<jinja::RenderOutput> without = Render(probe, false, kwargs);
    // Where the probe fails, so may the template's last statement: no shortcut then.
    if (with.ok() && without.ok()) {
      probes->generation_header = with->text.compare(0, without->text.size(), without->text) == 0
                                      ? with->text.substr(without->text.size())
                                      : std::string();
    }
  }
  return probes_->Put(key, probes);
}

std::optional<size_t> ChatTemplate::EndOfPrefix(const Conversation& conv, size_t i, size_t lo,
                                                const std::string& text, const json& kwargs) const {
  // Messages 0..i-1 rendered alone with markers: the text after the last marker of the last
  // written message is what closes them; it must follow `lo` in `text`.
  Conversation prefix;
  prefix.tools = conv.tools;
  prefix.documents = conv.documents;
  for (size_t k = 0; k < i; ++k) prefix.messages.push_back(MarkMessage(conv.messages[k], k));
  prefix.completion.assign(i, false);
  Result<jinja::RenderOutput> r = Render(prefix, false, kwargs);
  if (!r.ok()) return std::nullopt;
  std::vector<MarkerPos> pos;
  const std::string clean = Unmark(r->text, i, &pos);
  const auto last =
      std::find_if(pos.rbegin(), pos.rend(), [](const MarkerPos& p) { return p.last.has_value(); });
  const size_t tail_at = last == pos.rend() ? 0 : *last->last;
  const std::string_view tail = std::string_view(clean).substr(tail_at);
  if (text.compare(lo, tail.size(), tail) != 0) return std::nullopt;
  return lo + tail.size();
}

Result<ChatSpans> ChatTemplate::Spans(const Conversation& conv, TrainOn train_on,
                                      const json& kwargs) const {
  return SpansImpl(conv, train_on, kwargs, true, true);
}

Result<ChatSpans> ChatTemplate::SpansRenderingEveryPrefix(const Conversation& conv,
                                                          TrainOn train_on,
                                                          const json& kwargs) const {
  return SpansImpl(conv, train_on, kwargs, false, true);
}

Result<ChatSpans> ChatTemplate::SpansRenderingTwice(const Conversation& conv, TrainOn train_on,
                                                    const json& kwargs) const {
  return SpansImpl(conv, train_on, kwargs, true, false);
}

Result<ChatSpans> ChatTemplate::SpansImpl(const Conversation& conv, TrainOn train_on,
                                          const json& kwargs, bool header_shortcut,
                                          bool one_render) const {
  const std::string& name = template_->name();
  const size_t n = conv.messages.size();
  std::vector<size_t> turns;
  for (size_t i = 0; i < n; ++i) {
    if (conv.messages[i].value("role", "") != "assistant") continue;
    if (train_on == TrainOn::kCompletion && conv.is_prompt_completion && !conv.completion[i]) {
      continue;
    }
    turns.push_back(i);
  }
  if (train_on == TrainOn::kLast && !turns.empty()) turns = {turns.back()};
  const bool needs_markers =
      train_on != TrainOn::kAll && !template_->has_generation() && !turns.empty();
  // The text with each message's fields wrapped in markers, which must vanish cleanly.
  Conversation marked;
  if (needs_markers) {
    marked.tools = conv.tools;
    marked.documents = conv.documents;  // a retrieval template writes them before the messages
    marked.completion = conv.completion;
    marked.is_prompt_completion = conv.is_prompt_completion;
    for (size_t i = 0; i < n; ++i) marked.messages.push_back(MarkMessage(conv.messages[i], i));
  }
  ChatSpans out;
  std::vector<MarkerPos> pos;
  std::optional<std::string> once;
  if (needs_markers && one_render) {
    once = RenderOnce(*this, marker_free_source_, conv, marked, kwargs, &pos);
  }
  if (once) {
    out.text = std::move(*once);
  } else {
    STOKER_ASSIGN_OR_RETURN(jinja::RenderOutput full, Render(conv, false, kwargs));
    out.text = std::move(full.text);
    if (train_on == TrainOn::kAll) {
      out.trained.emplace_back(0, out.text.size());
      return out;
    }
    if (template_->has_generation()) {
      // The template's {% generation %} blocks are the trained spans, one per assistant turn.
      std::vector<std::pair<size_t, size_t>> spans = full.generation_spans;
      if (train_on == TrainOn::kLast && !spans.empty()) spans = {spans.back()};
      if (train_on == TrainOn::kCompletion && conv.is_prompt_completion) {
        size_t prompt_turns = 0;
        for (size_t i = 0; i < n; ++i) {
          prompt_turns += conv.messages[i].value("role", "") == "assistant" && !conv.completion[i];
        }
        if (prompt_turns > spans.size()) prompt_turns = spans.size();
        spans.erase(spans.begin(), spans.begin() + long(prompt_turns));
      }
      out.trained = std::move(spans);
      return out;
    }
    if (turns.empty()) return out;
    if (AnyMarkers(conv.messages)) {
      return Refuse(name, "the conversation contains private-use characters U+E000..U+E003");
    }
    STOKER_ASSIGN_OR_RETURN(jinja::RenderOutput mr, Render(marked, false, kwargs));
    if (Unmark(mr.text, n, &pos) != out.text) {
      // Equal messages that the markers made different, where the template compares messages
      // (Mistral writes its tools before each user message equal to the last): mark them alike.
      std::vector<std::vector<size_t>> group;
      std::vector<json> alike = MarkEqualAlike(conv.messages, &group);
      bool any_equal = false;
      for (size_t k = 0; k < n; ++k) any_equal |= group[k].size() > 1;
      bool same = false;
      if (any_equal) {
        Conversation marked_alike = marked;
        marked_alike.messages = json(alike);
        STOKER_ASSIGN_OR_RETURN(jinja::RenderOutput ma, Render(marked_alike, false, kwargs));
        same = Unmark(ma.text, n, &pos, &group) == out.text;
      }
      if (!same) {
        return Refuse(name, "the template changes a message's text beyond trimming its ends");
      }
    }
  }
  const std::shared_ptr<const ChatProbes> probes = Probes(kwargs);
  const std::vector<std::string>& eot = probes->end_of_turn;
  if (eot.empty()) return Refuse(name, "the template writes no end-of-turn token");
  // A message the template wrote (Unmark sets its first and last together).
  auto written = [](const MarkerPos& p) { return p.first.has_value(); };
  for (size_t i : turns) {
    if (pos[i].twice) return Refuse(name, "message " + std::to_string(i) + " is written twice");
    // 2. The lower bound: the end of the previous message that the template wrote.
    const auto before = std::find_if(pos.rend() - long(i), pos.rend(), written);
    const size_t lo = before == pos.rend() ? 0 : *before->last;
    // Where the next written message begins.
    const auto after = std::find_if(pos.begin() + long(i) + 1, pos.end(), written);
    const size_t hi = after == pos.end() ? out.text.size() : *after->first;
    // 3. The start: after the assistant header, the text add_generation_prompt writes after the
    //    messages before this turn (its longest prefix found between lo and the turn's text).
    const size_t text_at = pos[i].first.value_or(hi);
    std::string header;
    std::optional<size_t> header_end;
    bool header_known = i == 0;
    if (!header_known && header_shortcut && probes->generation_header) {
      // The prefix renders would give the probe's header where they succeed and none where they
      // fail. Both lead to the same start when that header is empty, or ends where the turn's
      // text begins; otherwise render them.
      const std::string& probe_header = *probes->generation_header;
      if (probe_header.empty()) {
        header_known = true;
      } else if (pos[i].first) {
        header_end = HeaderEnd(out.text, probe_header, lo, text_at, control_tokens_);
        if (header_end == pos[i].first) {
          header = probe_header;
          header_known = true;
        }
      }
    }
    if (!header_known) {
      Conversation prefix = conv;
      prefix.messages.erase(prefix.messages.begin() + long(i), prefix.messages.end());
      Result<jinja::RenderOutput> with = Render(prefix, true, kwargs);
      Result<jinja::RenderOutput> without = Render(prefix, false, kwargs);
      if (with.ok() && without.ok() &&
          with->text.compare(0, without->text.size(), without->text) == 0) {
        header = with->text.substr(without->text.size());
      }
      header_end.reset();
      if (!header.empty()) header_end = HeaderEnd(out.text, header, lo, text_at, control_tokens_);
    }
    size_t start = pos[i].first.value_or(lo);
    if (!header.empty()) {
      if (!header_end) {
        return Refuse(name, "the assistant header of message " + std::to_string(i) +
                                " (what add_generation_prompt writes) is not in the text");
      }
      start = *header_end;
    } else if (!pos[i].first) {
      // A turn the template writes without any field of it as text (Mistral's tool calls:
      // "[TOOL_CALLS][...]</s>") and with an empty header: it starts where the messages before
      // it end, after what the template writes after the last of them ("[/INST]").
      std::optional<size_t> after_before = EndOfPrefix(conv, i, lo, out.text, kwargs);
      if (!after_before) {
        return Refuse(name, "message " + std::to_string(i) +
                                " (an assistant turn written without its text, such as a tool "
                                "call) cannot be placed in the text");
      }
      start = *after_before;
    }
    // 4. The end: through the first end-of-turn token after the turn's text.
    size_t from = pos[i].last.value_or(start);
    std::optional<size_t> end;
    for (const std::string& t : eot) {
      size_t p = out.text.find(t, from);
      if (p != std::string::npos && p + t.size() <= hi && (!end || p + t.size() < *end)) {
        end = p + t.size();
      }
    }
    if (!end) {
      // A turn that ends with another control token than a plain turn's (Llama 3.x's tool call:
      // "<|python_tag|>...<|eom_id|>" in ipython mode; gpt-oss's "...<|call|>"): through the last
      // control token before the next turn opens (a control token of the assistant header, or
      // the next message) that the template does not write between turns (a user header).
      const std::string& opens =
          !header.empty() || !probes->generation_header ? header : *probes->generation_header;
      const std::vector<std::string>& between = probes->between_turns;
      for (size_t cur = from; !opens.empty();) {
        std::optional<size_t> at;
        std::string token;
        for (const std::string& t : control_tokens_) {
          const size_t p = out.text.find(t, cur);
          if (p != std::string::npos && p + t.size() <= hi && (!at || p < *at)) {
            at = p;
            token = t;
          }
        }
        if (!at || opens.find(token) != std::string::npos) break;
        cur = *at + token.size();
        if (std::find(between.begin(), between.end(), token) == between.end()) end = cur;
      }
    }
    if (!end) {
      return Refuse(name,
                    "no end-of-turn token (" + eot[0] + ") closes message " + std::to_string(i));
    }
    out.trained.emplace_back(start, *end);
  }
  return out;
}

}  // namespace stoker
