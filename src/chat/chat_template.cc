#include "chat/chat_template.h"

#include <xxhash.h>

#include <algorithm>
#include <bitset>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "chat/json_record.h"
#include "text/padded_json.h"

namespace stoker {
namespace {

using json = nlohmann::ordered_json;

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const char* const kSpecialTokenKeys[] = {"bos_token", "eos_token", "unk_token", "sep_token",
                                         "pad_token", "cls_token", "mask_token"};

std::string TokenText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) {
    return v["content"].get<std::string>();
  }
  return {};
}

bool IsSpaceOnly(const std::string& s) { return s.find_first_not_of(" \n\t\r") == s.npos; }

Status CheckContent(const json& m, size_t i) {
  if (!m.contains("content") || m["content"].is_null() || m["content"].is_string()) {
    return Status::OK();
  }
  if (m["content"].is_array()) {
    for (const json& part : m["content"]) {
      if (!part.is_object() || !part.contains("type") || !part["type"].is_string()) {
        return InvalidArgument("message " + std::to_string(i) +
                               ": a content part must be an object with a \"type\"");
      }
      if (part["type"] == "text" && !(part.contains("text") && part["text"].is_string())) {
        return InvalidArgument("message " + std::to_string(i) +
                               ": a text part must have a string \"text\"");
      }
    }
    return Status::OK();
  }
  return InvalidArgument("message " + std::to_string(i) +
                         ": content must be a string or a list of parts");
}

Status CheckMessages(const json& messages) {
  if (!messages.is_array() || messages.empty()) {
    return InvalidArgument("a conversation must be a non-empty list of messages");
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    if (!m.is_object())
      return InvalidArgument("message " + std::to_string(i) + " is not an object");
    if (!m.contains("role") || !m["role"].is_string()) {
      return InvalidArgument("message " + std::to_string(i) + " has no role");
    }
    std::string role = m["role"];
    if (role != "system" && role != "user" && role != "assistant" && role != "tool") {
      return InvalidArgument("message " + std::to_string(i) + " has an unknown role '" + role +
                             "' (system, user, assistant or tool)");
    }
    STOKER_RETURN_IF_ERROR(CheckContent(m, i));
    if (role == "assistant") {
      // An empty string is content: transformers renders the turn ("" between its header and
      // its end-of-turn token).
      bool has_content =
          m.contains("content") &&
          (m["content"].is_string() || (m["content"].is_array() && !m["content"].empty()));
      bool has_calls =
          m.contains("tool_calls") && m["tool_calls"].is_array() && !m["tool_calls"].empty();
      if (!has_content && !has_calls) {
        return InvalidArgument("message " + std::to_string(i) +
                               ": an assistant turn with no content and no tool call");
      }
    }
  }
  return Status::OK();
}

Result<json> MessagesFrom(const json& v, const char* role) {
  if (v.is_string()) return json::array({json{{"role", role}, {"content", v}}});
  if (v.is_array()) return v;
  return InvalidArgument(std::string("\"") +
                         (std::string(role) == "user" ? "prompt" : "completion") +
                         "\" must be a string or a list of messages");
}

Result<json> FromShareGpt(const json& turns) {
  if (!turns.is_array()) return InvalidArgument("\"conversations\" must be a list");
  json out = json::array();
  for (size_t i = 0; i < turns.size(); ++i) {
    const json& t = turns[i];
    if (!t.is_object() || !t.contains("from") || !t["from"].is_string() || !t.contains("value")) {
      return InvalidArgument("conversations[" + std::to_string(i) +
                             "] must be an object with \"from\" and \"value\"");
    }
    std::string from = t["from"];
    std::string role;
    if (from == "human" || from == "user") {
      role = "user";
    } else if (from == "gpt" || from == "assistant" || from == "model") {
      role = "assistant";
    } else if (from == "system") {
      role = "system";
    } else if (from == "tool" || from == "function_response" || from == "observation") {
      role = "tool";
    } else {
      return InvalidArgument("conversations[" + std::to_string(i) + "] has an unknown \"from\" '" +
                             from + "' (human, gpt, system or tool)");
    }
    out.push_back(json{{"role", role}, {"content", t["value"]}});
  }
  return out;
}

}  // namespace

Result<TrainOn> ParseTrainOn(std::string_view name) {
  if (name == "assistant") return TrainOn::kAssistant;
  if (name == "last") return TrainOn::kLast;
  if (name == "completion") return TrainOn::kCompletion;
  if (name == "all") return TrainOn::kAll;
  return InvalidArgument("--train-on must be assistant, last, completion or all, not '" +
                         std::string(name) + "'");
}

Result<Conversation> ParseConversation(json record, std::string_view field) {
  if (!record.is_object()) return InvalidArgument("a chat record must be a JSON object");
  // Every later walk of the record (rendering, JSON dumps) recurses: its depth is bounded first.
  STOKER_RETURN_IF_ERROR(CheckJsonDepth(record));
  Conversation conv;
  auto has = [&](const char* k) { return record.contains(k) && !record[k].is_null(); };
  std::string f(field);
  if (f.empty()) {
    if (has("messages")) {
      f = "messages";
    } else if (has("conversations")) {
      f = "conversations";
    } else if (has("prompt") && has("completion")) {
      f = "prompt";
    } else {
      return InvalidArgument(
          "the record has no conversation (a \"messages\", \"conversations\", or \"prompt\" + "
          "\"completion\" field)");
    }
  } else if (!has(f.c_str())) {
    return InvalidArgument("the record has no field \"" + f + "\"");
  }
  if (f == "prompt" || f == "completion") {
    if (!has("prompt") || !has("completion")) {
      return InvalidArgument("a prompt/completion record needs both fields");
    }
    STOKER_ASSIGN_OR_RETURN(json p, MessagesFrom(record["prompt"], "user"));
    STOKER_ASSIGN_OR_RETURN(json c, MessagesFrom(record["completion"], "assistant"));
    conv.messages = std::move(p);
    conv.completion.assign(conv.messages.size(), false);
    conv.messages.insert(conv.messages.end(), c.begin(), c.end());
    conv.completion.resize(conv.messages.size(), true);
    conv.is_prompt_completion = true;
  } else if (record[f].is_array() && !record[f].empty() && record[f][0].is_object() &&
             record[f][0].contains("from")) {
    STOKER_ASSIGN_OR_RETURN(conv.messages, FromShareGpt(record[f]));
    if (record.contains("system") && record["system"].is_string() &&
        !(conv.messages.size() && conv.messages[0]["role"] == "system")) {
      conv.messages.insert(conv.messages.begin(),
                           json{{"role", "system"}, {"content", record["system"]}});
    }
  } else {
    conv.messages = f == "tools" ? record[f] : std::move(record[f]);  // tools are read below
  }
  STOKER_RETURN_IF_ERROR(CheckMessages(conv.messages));
  conv.completion.resize(conv.messages.size(), false);
  if (has("tools")) {
    if (!record["tools"].is_array()) return InvalidArgument("\"tools\" must be a list");
    conv.tools = std::move(record["tools"]);
  }
  if (has("documents")) {  // RAG templates (Command-R, Granite) read them, as `documents=`
    if (!record["documents"].is_array()) return InvalidArgument("\"documents\" must be a list");
    conv.documents = std::move(record["documents"]);
  }
  return conv;
}

Result<ChatTemplate> ChatTemplate::FromString(std::string_view source, std::string name,
                                              json special_tokens,
                                              std::vector<std::string> control_tokens) {
  STOKER_ASSIGN_OR_RETURN(jinja::Template t, jinja::Template::Parse(source, std::move(name)));
  ChatTemplate c;
  c.template_ = std::make_shared<const jinja::Template>(std::move(t));
  c.generation_prompt_ignores_messages_ = GenerationPromptIgnoresMessages(c.template_->body());
  c.special_tokens_ = std::move(special_tokens);
  c.marker_free_source_ =
      !MayWriteSpanMarkers(source) && !MayWriteSpanMarkers(c.special_tokens_.dump());
  c.control_tokens_ = std::move(control_tokens);
  const std::string keyed = std::string(source) + '\0' + c.special_tokens_.dump();
  c.source_hash_ = XXH3_64bits(keyed.data(), keyed.size());
  return c;
}

namespace {

struct ConfigTokens {
  json special = json::object();
  std::vector<std::pair<std::string, bool>> added;  // content, special
};

Result<ConfigTokens> ReadConfigTokens(const json& config) {
  ConfigTokens t;
  for (const char* k : kSpecialTokenKeys) {
    if (!config.contains(k)) continue;
    std::string s = TokenText(config[k]);
    if (!s.empty()) t.special[k] = s;
  }
  if (config.contains("added_tokens_decoder") && config["added_tokens_decoder"].is_object()) {
    for (const auto& [id, tok] : config["added_tokens_decoder"].items()) {
      std::string s = TokenText(tok);
      if (!s.empty()) t.added.emplace_back(s, tok.value("special", false));
    }
  }
  return t;
}

// The added tokens of the tokenizer.json in `dir` that the config does not list: transformers'
// added_tokens_decoder holds both, so a config without added_tokens_decoder (DeepSeek-R1's)
// still has the file's special tokens as control tokens. A file that does not parse adds none
// (opening the tokenizer reports it).
Status AddTokenizerJsonTokens(const std::string& dir, ConfigTokens* t) {
  const std::string path = (std::filesystem::path(dir) / "tokenizer.json").string();
  if (!std::filesystem::exists(path)) return Status::OK();
  STOKER_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  // simdjson's DOM: a 17 MB file in tens of milliseconds; only added_tokens is read.
  PaddedJsonParser parser;
  simdjson::dom::element root;
  simdjson::dom::array added;
  if (parser.Parse(text, &root) != simdjson::SUCCESS ||
      root["added_tokens"].get_array().get(added) != simdjson::SUCCESS) {
    return Status::OK();
  }
  for (simdjson::dom::element e : added) {
    std::string_view content;
    if (e["content"].get_string().get(content) != simdjson::SUCCESS || content.empty()) continue;
    bool special = false;
    if (e["special"].get_bool().get(special) != simdjson::SUCCESS) special = false;
    const bool listed = std::any_of(t->added.begin(), t->added.end(),
                                    [&](const auto& a) { return a.first == content; });
    if (!listed) t->added.emplace_back(std::string(content), special);
  }
  return Status::OK();
}

std::vector<std::string> ControlTokens(const ConfigTokens& t, std::string_view source) {
  // transformers' _get_control_tokens: special added tokens, and the others the template writes
  // (whitespace tokens excepted).
  std::vector<std::string> out;
  for (const auto& [s, special] : t.added) {
    if (special || (source.find(s) != std::string_view::npos && !IsSpaceOnly(s))) out.push_back(s);
  }
  for (const auto& [k, v] : t.special.items()) {
    std::string s = v.get<std::string>();
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

Result<json> ReadConfig(const std::string& dir) {
  std::string path = (std::filesystem::path(dir) / "tokenizer_config.json").string();
  if (!std::filesystem::exists(path)) return json::object();
  STOKER_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  json config = json::parse(text, nullptr, false);
  if (config.is_discarded() || !config.is_object()) {
    return InvalidArgument(path + " is not a JSON object");
  }
  return config;
}

}  // namespace

Result<ChatTemplate> ChatTemplate::FromModelDir(const std::string& dir) {
  namespace fs = std::filesystem;
  STOKER_ASSIGN_OR_RETURN(json config, ReadConfig(dir));
  STOKER_ASSIGN_OR_RETURN(ConfigTokens tokens, ReadConfigTokens(config));
  STOKER_RETURN_IF_ERROR(AddTokenizerJsonTokens(dir, &tokens));
  std::string jinja_path = (fs::path(dir) / "chat_template.jinja").string();
  std::string source, name;
  if (fs::exists(jinja_path)) {
    STOKER_ASSIGN_OR_RETURN(source, ReadWholeFile(jinja_path));
    name = jinja_path;
  } else if (config.contains("chat_template")) {
    const json& ct = config["chat_template"];
    name = (fs::path(dir) / "tokenizer_config.json").string();
    if (ct.is_string()) {
      source = ct.get<std::string>();
    } else if (ct.is_array()) {
      for (const json& e : ct) {
        if (e.is_object() && e.value("name", "") == "default" && e.contains("template") &&
            e["template"].is_string()) {
          source = e["template"].get<std::string>();
        }
      }
      if (source.empty()) return InvalidArgument(name + ": no chat_template named \"default\"");
    } else {
      return InvalidArgument(name + ": chat_template must be a string or a list");
    }
  } else {
    return NotFound("no chat template in " + dir +
                    " (chat_template.jinja, or chat_template in tokenizer_config.json); give "
                    "one with --chat-template");
  }
  return FromString(source, name, tokens.special, ControlTokens(tokens, source));
}

Result<ChatTemplate> ChatTemplate::FromFile(const std::string& path,
                                            const std::string& config_dir) {
  STOKER_ASSIGN_OR_RETURN(std::string source, ReadWholeFile(path));
  json config = json::object();
  if (!config_dir.empty()) {
    STOKER_ASSIGN_OR_RETURN(config, ReadConfig(config_dir));
  }
  STOKER_ASSIGN_OR_RETURN(ConfigTokens tokens, ReadConfigTokens(config));
  if (!config_dir.empty()) STOKER_RETURN_IF_ERROR(AddTokenizerJsonTokens(config_dir, &tokens));
  return FromString(source, path, tokens.special, ControlTokens(tokens, source));
}

namespace {

// transformers: keys with None values dropped, then _alias_reasoning_fields (the reasoning under
// "thinking" first and under "reasoning_content" in its place or last). Built as template values
// at once: a normalized JSON copy would copy every string twice.
jinja::Value NormalizedMessage(const json& m) {
  const json* reasoning = nullptr;
  for (const char* f : {"reasoning_content", "thinking", "reasoning"}) {
    auto it = m.find(f);
    if (it != m.end() && !it->is_null()) {
      reasoning = &*it;
      break;
    }
  }
  jinja::Dict d;
  d.items.reserve(m.size() + 2);
  if (reasoning) d.items.emplace_back("thinking", jinja::Value::FromJson(*reasoning));
  for (auto it = m.begin(); it != m.end(); ++it) {
    if (it->is_null() || (reasoning && it.key() == "thinking")) continue;
    d.items.emplace_back(it.key(), jinja::Value::FromJson(*it));
  }
  if (reasoning) d.Set("reasoning_content", jinja::Value::FromJson(*reasoning));
  return jinja::Value::MakeDict(std::move(d));
}

}  // namespace

Result<jinja::RenderOutput> ChatTemplate::Render(const Conversation& conv,
                                                 bool add_generation_prompt,
                                                 const json& kwargs) const {
  jinja::Dict ctx;
  for (const auto& [k, v] : special_tokens_.items()) ctx.Set(k, jinja::Value::FromJson(v));
  STOKER_RETURN_IF_ERROR(CheckJsonDepth(kwargs));
  for (const auto& [k, v] : kwargs.items()) ctx.Set(k, jinja::Value::FromJson(v));
  jinja::ValueList messages;
  messages.reserve(conv.messages.size());
  for (const json& m : conv.messages) messages.push_back(NormalizedMessage(m));
  ctx.Set("messages", jinja::Value::List(std::move(messages)));
  ctx.Set("tools", jinja::Value::FromJson(conv.tools));
  // apply_chat_template's `documents` (None when absent): the record's, else a keyword's.
  if (!conv.documents.is_null() || !kwargs.contains("documents")) {
    ctx.Set("documents", jinja::Value::FromJson(conv.documents));
  }
  ctx.Set("add_generation_prompt", jinja::Value::Bool(add_generation_prompt));
  return template_->Render(ctx);
}

namespace {

std::string MarkString(const std::string& s, const std::vector<std::string>& tokens) {
  // Most strings hold neither a mark nor a control token: only the positions whose byte starts
  // one are compared (a mark starts with 0xF3; `first` holds the tokens' first bytes).
  std::bitset<256> first;
  for (const std::string& t : tokens) {
    if (!t.empty()) first.set(static_cast<unsigned char>(t[0]));
  }
  std::string clean;
  clean.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t next = s.find(kChatMarkStart[0], i);
    if (next != i) {
      const size_t stop = next == std::string::npos ? s.size() : next;
      clean.append(s, i, stop - i);
      i = stop;
    } else if (s.compare(i, 4, kChatMarkStart) == 0 || s.compare(i, 4, kChatMarkEnd) == 0) {
      i += 4;
    } else {
      clean += s[i++];
    }
  }
  std::string out;
  out.reserve(clean.size());
  for (size_t i = 0; i < clean.size();) {
    if (!first[static_cast<unsigned char>(clean[i])]) {
      out += clean[i++];
      continue;
    }
    const std::string* best = nullptr;
    for (const std::string& t : tokens) {
      if (!t.empty() && clean.compare(i, t.size(), t) == 0 && (!best || t.size() > best->size())) {
        best = &t;
      }
    }
    if (best) {
      out += kChatMarkStart + *best + kChatMarkEnd;
      i += best->size();
    } else {
      out += clean[i++];
    }
  }
  return out;
}

json MarkJson(const json& v, const std::vector<std::string>& tokens) {
  if (v.is_string()) return MarkString(v.get<std::string>(), tokens);
  if (v.is_array()) {
    json out = json::array();
    for (const json& e : v) out.push_back(MarkJson(e, tokens));
    return out;
  }
  if (v.is_object()) {
    json out = json::object();
    for (const auto& [k, e] : v.items()) out[k] = MarkJson(e, tokens);
    return out;
  }
  return v;
}

// Whether MarkJson would change `v`: a string holds a mark or a control token's text.
bool MarkingChanges(const json& v, const std::vector<std::string>& tokens) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s.find(kChatMarkStart) != std::string::npos || s.find(kChatMarkEnd) != std::string::npos) {
      return true;
    }
    for (const std::string& t : tokens) {
      if (!t.empty() && s.find(t) != std::string::npos) return true;
    }
    return false;
  }
  if (v.is_array() || v.is_object()) {
    for (const json& e : v) {
      if (MarkingChanges(e, tokens)) return true;
    }
  }
  return false;
}

}  // namespace

bool ChatTemplate::NeedsControlTokenMarks(const Conversation& conv, const json& kwargs) const {
  return MarkingChanges(conv.messages, control_tokens_) ||
         MarkingChanges(conv.tools, control_tokens_) || MarkingChanges(kwargs, control_tokens_);
}

Result<std::string> ChatTemplate::RenderMarkedControlTokens(const Conversation& conv,
                                                            const json& kwargs) const {
  Conversation marked = conv;
  marked.messages = MarkJson(conv.messages, control_tokens_);
  marked.tools = MarkJson(conv.tools, control_tokens_);
  STOKER_ASSIGN_OR_RETURN(jinja::RenderOutput out,
                          Render(marked, false, MarkJson(kwargs, control_tokens_)));
  return std::move(out.text);
}

}  // namespace stoker
