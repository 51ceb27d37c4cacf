// The probes' shortcut (chat_probes.h) must give the spans that rendering every prefix gives:
// per template, per kwargs, and never for a template whose generation prompt reads the messages.
#include "text/chat_probes.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "text/chat_template.h"

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
  const json special = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};
  size_t compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(STOKER_SOURCE_DIR) +
                                                               "/tests/data/chat_templates")) {
    if (entry.path().extension() != ".jinja") continue;
    const std::string name = entry.path().filename().string();
    Result<ChatTemplate> t = ChatTemplate::FromString(TemplateFile(name), name, special, kControl);
    ASSERT_TRUE(t.ok()) << name << ": " << t.status().ToString();
    for (const json& kwargs : {json::object(), json{{"enable_thinking", false}}}) {
      for (const json& r : records) {
        EXPECT_EQ(Trained(*t, r, kwargs), Trained(*t, r, kwargs, false))
            << name << " " << kwargs.dump() << " " << r.dump();
        ++compared;
      }
    }
  }
  EXPECT_GE(compared, 8 * 15u);
}

}  // namespace
}  // namespace stoker
