// The probes' shortcut (chat_probes.h) must give the spans that rendering every prefix gives:
// per template, per kwargs, and never for a template whose generation prompt reads the messages.
// Likewise one marked rendering (where the template only passes the message text on,
// jinja::ReadWatch) must give what rendering the conversation twice gives: text, spans, errors.
#include "chat/chat_probes.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "chat/chat_template.h"

namespace stoker {
namespace {

using json = nlohmann::ordered_json;

const std::vector<std::string> kControl = {"<|im_start|>", "<|im_end|>", "<s>",         "</s>",
                                           "[INST]",       "[/INST]",    "[TOOL_CALLS]"};

std::string TemplateFile(const std::string& name) {
  std::ifstream in(std::string(STOKER_SOURCE_DIR) + "/tests/data/chat_templates/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ChatTemplate FromSource(const std::string& source, json special = json::object()) {
  Result<ChatTemplate> t = ChatTemplate::FromString(source, "test.jinja", std::move(special),
                                                    {"<|im_start|>", "<|im_end|>"});
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

bool IgnoresMessages(const std::string& source) {
  Result<jinja::Template> t = jinja::Template::Parse(source, "test.jinja");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return GenerationPromptIgnoresMessages(t->body());
}

// The trained texts, or the error.
std::vector<std::string> Trained(const ChatTemplate& t, const json& record, const json& kwargs,
                                 bool shortcut = true) {
  Result<Conversation> c = ParseConversation(record);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  Result<ChatSpans> s = shortcut ? t.Spans(*c, TrainOn::kAssistant, kwargs)
                                 : t.SpansRenderingEveryPrefix(*c, TrainOn::kAssistant, kwargs);
  if (!s.ok()) return {"error: " + s.status().message()};
  std::vector<std::string> out;
  for (auto [b, e] : s->trained) out.push_back(s->text.substr(b, e - b));
  return out;
}

TEST(ChatProbesTest, GenerationPromptIgnoresMessagesOnlyWhereItCannotReadThem) {
  for (const char* name : {"qwen2_5.jinja", "qwen3.jinja", "llama3_1.jinja", "phi3_5.jinja",
                           "gemma3.jinja", "lfm2_2_5.jinja"}) {
    EXPECT_TRUE(IgnoresMessages(TemplateFile(name))) << name;
  }
  // DeepSeek's header depends on whether the last message was a tool's; gpt-oss reads the flag
  // inside its loop.
  EXPECT_FALSE(IgnoresMessages(TemplateFile("deepseekv3.jinja")));
  EXPECT_FALSE(IgnoresMessages(TemplateFile("gptoss.jinja")));
  EXPECT_FALSE(
      IgnoresMessages("x{% if add_generation_prompt %}{{ messages[-1].role }}{% endif %}"));
  EXPECT_FALSE(
      IgnoresMessages("{% if add_generation_prompt %}{{ strftime_now('%d') }}{% endif %}"));
  EXPECT_FALSE(IgnoresMessages(
      "{% set h = messages|length %}{% if add_generation_prompt %}{{ h }}{% endif %}"));
  EXPECT_FALSE(IgnoresMessages("{% if add_generation_prompt %}A{% endif %}{{ messages|length }}"));
  EXPECT_FALSE(IgnoresMessages(
      "{% if add_generation_prompt %}A{% endif %}{% if add_generation_prompt %}B{% endif %}"));
  EXPECT_TRUE(IgnoresMessages(
      "{{ messages|length }}{% if add_generation_prompt %}A{% if x is defined %}{{ x }}{% endif %}"
      "{% else %}B{% endif %}\n"));
}

// Each assistant message is written "<|im_start|>assistant\nSure: TEXT<|im_end|>"; what the
// generation prompt writes decides whether "Sure: " is trained.
const char kSure[] =
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.role == 'assistant' %}Sure: "
    "{% endif %}{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{{ HEADER }}{% endif %}";

std::string SureTemplate(const std::string& header_expr) {
  std::string s = kSure;
  s.replace(s.find("{{ HEADER }}"), 12, header_expr);
  return s;
}

const json kChat = json::parse(R"({"messages": [{"role": "user", "content": "short"},
    {"role": "assistant", "content": "A"}, {"role": "user", "content": "q"},
    {"role": "assistant", "content": "B"}]})");

TEST(ChatProbesTest, KwargsGetTheirOwnProbes) {
  ChatTemplate t = FromSource(SureTemplate("{% if long_header %}Sure: {% endif %}"));
  const json long_header = {{"long_header", true}}, short_header = {{"long_header", false}};
  const std::vector<std::string> short_spans = {"Sure: A<|im_end|>", "Sure: B<|im_end|>"};
  const std::vector<std::string> long_spans = {"A<|im_end|>", "B<|im_end|>"};
  // The long header's probes first: the short header must not reuse them.
  EXPECT_EQ(Trained(t, kChat, long_header), long_spans);
  EXPECT_EQ(Trained(t, kChat, short_header), short_spans);
  EXPECT_EQ(Trained(t, kChat, long_header), long_spans);
  EXPECT_EQ(Trained(t, kChat, short_header, false), short_spans);
}

TEST(ChatProbesTest, ManyKwargsOverflowTheCacheAndStillGetTheirOwnProbes) {
  ChatTemplate t = FromSource(SureTemplate("{% if long_header %}Sure: {% endif %}"));
  for (int i = 0; i < 150; ++i) {
    const json kwargs = {{"n", i}, {"long_header", i % 3 == 0}};
    EXPECT_EQ(Trained(t, kChat, kwargs), Trained(t, kChat, kwargs, false)) << i;
  }
}

TEST(ChatProbesTest, TwoTemplatesDoNotShareProbes) {
  ChatTemplate long_t = FromSource(SureTemplate("Sure: "));
  ChatTemplate short_t = FromSource(SureTemplate(""));
  ChatTemplate copy = long_t;  // a copy renders alike and may share
  EXPECT_EQ(Trained(long_t, kChat, json::object()),
            (std::vector<std::string>{"A<|im_end|>", "B<|im_end|>"}));
  EXPECT_EQ(Trained(short_t, kChat, json::object()),
            (std::vector<std::string>{"Sure: A<|im_end|>", "Sure: B<|im_end|>"}));
  EXPECT_EQ(Trained(copy, kChat, json::object()),
            (std::vector<std::string>{"A<|im_end|>", "B<|im_end|>"}));
}

TEST(ChatProbesTest, AHeaderThatReadsTheMessagesIsRenderedPerTurn) {
  // The probe ("a") gets the long header; a turn after "short" gets the short one.
  ChatTemplate t =
      FromSource(SureTemplate("{% if messages[-1].content != 'short' %}Sure: {% endif %}"));
  EXPECT_EQ(Trained(t, kChat, json::object()),
            (std::vector<std::string>{"Sure: A<|im_end|>", "B<|im_end|>"}));
}

// Every template of tests/data/chat_templates, by file name.
std::vector<std::pair<std::string, ChatTemplate>> TestTemplates() {
  const json special = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};
  std::vector<std::pair<std::string, ChatTemplate>> out;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(STOKER_SOURCE_DIR) +
                                                               "/tests/data/chat_templates")) {
    if (entry.path().extension() != ".jinja") continue;
    const std::string name = entry.path().filename().string();
    Result<ChatTemplate> t = ChatTemplate::FromString(TemplateFile(name), name, special, kControl);
    EXPECT_TRUE(t.ok()) << name << ": " << t.status().ToString();
    if (t.ok()) out.emplace_back(name, std::move(t).value());
  }
  return out;
}

TEST(ChatProbesTest, EveryTestTemplateGivesTheSpansOfRenderingEveryPrefix) {
  const std::vector<json> records = {
      json::parse(R"({"messages": [{"role": "user", "content": "Hi"},
          {"role": "assistant", "content": "Hello there"}]})"),
      json::parse(R"({"messages": [{"role": "system", "content": "Be brief."},
          {"role": "user", "content": "Q1"}, {"role": "assistant", "content": "A1"},
          {"role": "user", "content": "Q2"},
          {"role": "assistant", "content": "A2", "reasoning_content": "R2"}]})"),
      json::parse(R"({"messages": [{"role": "user", "content": "weather?"},
          {"role": "assistant", "content": "",
           "tool_calls": [{"type": "function", "function": {"name": "get", "arguments": "{}"}}]},
          {"role": "tool", "content": "sunny"},
          {"role": "assistant", "content": "It is sunny."}]})"),
      json::parse(R"({"messages": [{"role": "user", "content": " padded "},
          {"role": "assistant", "content": "\n x \n"}, {"role": "user", "content": "<|im_end|>"},
          {"role": "assistant", "content": "y"}]})"),
  };
  size_t compared = 0;
  for (const auto& [name, t] : TestTemplates()) {
    for (const json& kwargs : {json::object(), json{{"enable_thinking", false}}}) {
      for (const json& r : records) {
        EXPECT_EQ(Trained(t, r, kwargs), Trained(t, r, kwargs, false))
            << name << " " << kwargs.dump() << " " << r.dump();
        ++compared;
      }
    }
  }
  EXPECT_GE(compared, 8 * 15u);
}

// The text and the trained texts, or the error.
std::vector<std::string> TextAndTrained(const ChatTemplate& t, const json& record, TrainOn on,
                                        const json& kwargs, bool twice) {
  Result<Conversation> c = ParseConversation(record);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  Result<ChatSpans> s = twice ? t.SpansRenderingTwice(*c, on, kwargs) : t.Spans(*c, on, kwargs);
  if (!s.ok()) return {"error: " + s.status().message()};
  std::vector<std::string> out = {s->text};
  for (auto [b, e] : s->trained) out.push_back(s->text.substr(b, e - b));
  return out;
}

const char* const kRecords[] = {
    R"({"messages": [{"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello there"}]})",
    R"({"messages": [{"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Q1"}, {"role": "assistant", "content": "A1"},
        {"role": "user", "content": "Q2"},
        {"role": "assistant", "content": "A2", "reasoning_content": "\nR2\n"}]})",
    R"({"messages": [{"role": "user", "content": "weather?"},
        {"role": "assistant", "content": "",
         "tool_calls": [{"type": "function", "function": {"name": "get", "arguments": "{}"}}]},
        {"role": "tool", "content": "sunny"}, {"role": "assistant", "content": "It is sunny."}]})",
    R"({"messages": [{"role": "user", "content": " padded "},
        {"role": "assistant", "content": "\n x \n"}, {"role": "user", "content": "<|im_end|>"},
        {"role": "assistant", "content": "y <|im_start|> </s>"}]})",
    R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "part"}]},
        {"role": "assistant", "content": "  "}, {"role": "user", "content": "\u000b\u3000v "},
        {"role": "assistant", "content": "<think>r</think>a", "thinking": "t"}]})",
    R"({"prompt": "p", "completion": "c"})",
};

TEST(ChatProbesTest, EveryTestTemplateGivesTheSpansOfRenderingTwice) {
  size_t compared = 0;
  for (const auto& [name, t] : TestTemplates()) {
    for (const json& kwargs : {json::object(), json{{"enable_thinking", false}}}) {
      for (const char* r : kRecords) {
        const json record = json::parse(r);
        for (TrainOn on : {TrainOn::kAssistant, TrainOn::kLast, TrainOn::kCompletion}) {
          EXPECT_EQ(TextAndTrained(t, record, on, kwargs, false),
                    TextAndTrained(t, record, on, kwargs, true))
              << name << " " << kwargs.dump() << " " << record.dump();
          ++compared;
        }
      }
    }
  }
  EXPECT_GE(compared, 15 * 2 * 6 * 3u);
}

// "<|im_start|>ROLE\nTEXT<|im_end|>\n" per message, TEXT written by `text`.
std::string TurnTemplate(const std::string& text) {
  return "{% for m in messages %}<|im_start|>{{ m.role }}\n" + text +
         "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
}

const json kShort = json::parse(R"({"messages": [{"role": "user", "content": "ab"},
    {"role": "assistant", "content": "cd"}]})");

TEST(ChatProbesTest, ATemplateThatReadsTheTextIsRenderedTwice) {
  // With markers each text is longer than 3, equal to nothing, starts with a marker: the marked
  // rendering alone would take the other branch or write other text. Rendered twice, the text
  // differs from the plain rendering's and the conversation is refused, as it is without the
  // shortcut.
  for (const char* text :
       {"{% if m.content|length > 3 %}long {% endif %}{{ m.content }}",
        "{% if m.content == 'ab' %}AB {% endif %}{{ m.content }}",
        "{% if m.content.startswith('a') %}A {% endif %}{{ m.content }}", "{{ m.content[0:1] }}"}) {
    ChatTemplate t = FromSource(TurnTemplate(text));
    std::vector<std::string> once =
        TextAndTrained(t, kShort, TrainOn::kAssistant, json::object(), false);
    EXPECT_EQ(once, TextAndTrained(t, kShort, TrainOn::kAssistant, json::object(), true)) << text;
    ASSERT_EQ(once.size(), 1u) << text;
    EXPECT_NE(once[0].find("changes a message's text"), std::string::npos) << once[0];
  }
  // Read, and written the same with markers: both give the spans.
  ChatTemplate t = FromSource(TurnTemplate("{{ m.content|trim }}"));
  EXPECT_EQ(TextAndTrained(t, kShort, TrainOn::kAssistant, json::object(), false),
            (std::vector<std::string>{
                "<|im_start|>user\nab<|im_end|>\n<|im_start|>assistant\ncd<|im_end|>\n",
                "cd<|im_end|>"}));
}

TEST(ChatProbesTest, MarkersFromOutsideTheMessagesAreNotTakenForTheirs) {
  // A kwarg, a tool or the template itself writes marker text that Unmark would remove: only
  // rendering the conversation as it is shows that its text differs.
  const std::string marker =
      "\xee\x80\x80"
      "64\xee\x80\x81";
  ChatTemplate from_kwargs = FromSource("{{ extra }}" + TurnTemplate("{{ m.content }}"));
  const json kwargs = {{"extra", marker}};
  EXPECT_EQ(TextAndTrained(from_kwargs, kShort, TrainOn::kAssistant, kwargs, false),
            TextAndTrained(from_kwargs, kShort, TrainOn::kAssistant, kwargs, true));
  ChatTemplate escaped =
      FromSource("{{ '\\ue000' ~ '64' ~ '\\ue001' }}" + TurnTemplate("{{ m.content }}"));
  std::vector<std::string> once =
      TextAndTrained(escaped, kShort, TrainOn::kAssistant, json::object(), false);
  EXPECT_EQ(once, TextAndTrained(escaped, kShort, TrainOn::kAssistant, json::object(), true));
  EXPECT_NE(once[0].find("changes a message's text"), std::string::npos) << once[0];
}

}  // namespace
}  // namespace stoker
