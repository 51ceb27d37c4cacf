#include "chat/chat_template.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>

#include "common/temp_dir.h"

namespace stoker {
namespace {

using json = nlohmann::ordered_json;

ChatTemplate Load(const std::string& name, json special) {
  std::ifstream in(std::string(STOKER_SOURCE_DIR) + "/tests/data/chat_templates/" + name);
  std::stringstream s;
  s << in.rdbuf();
  Result<ChatTemplate> t = ChatTemplate::FromString(
      s.str(), name, std::move(special),
      {"<|im_start|>", "<|im_end|>", "<s>", "</s>", "[INST]", "[/INST]", "[TOOL_CALLS]"});
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

std::vector<std::string> Trained(const ChatTemplate& t, const json& record, TrainOn on) {
  Result<Conversation> c = ParseConversation(record);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  Result<ChatSpans> s = t.Spans(*c, on, json::object());
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  std::vector<std::string> out;
  for (auto [b, e] : s->trained) out.push_back(s->text.substr(b, e - b));
  return out;
}

// transformers' control tokens: the special added tokens and the others the template writes,
// from tokenizer_config.json's added_tokens_decoder and from the tokenizer.json beside it (a
// config that lists none, as DeepSeek-R1-Distill's, still has the file's special tokens).
TEST(ChatTemplateTest, ControlTokensComeFromTheConfigAndTheTokenizerJson) {
  std::unique_ptr<TempDir> dir = TempDir::Create("stoker-chat-control-").value();
  std::ofstream(dir->Join("tokenizer.json"))
      << R"({"added_tokens": [{"id": 5, "content": "<|ctl|>", "special": true},
                              {"id": 6, "content": "<tool>", "special": false},
                              {"id": 7, "content": "<other>", "special": false},
                              {"id": 8, "content": "<|cfg|>", "special": true}],
             "model": {"type": "BPE", "vocab": {}, "merges": []}})";
  json config = {{"chat_template", "{{ messages[0]['content'] }}<tool>"},
                 {"added_tokens_decoder", {{"8", {{"content", "<|cfg|>"}, {"special", false}}}}}};
  std::ofstream(dir->Join("tokenizer_config.json")) << config.dump();
  Result<ChatTemplate> t = ChatTemplate::FromModelDir(dir->path());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  std::vector<std::string> got = t->control_tokens();
  std::sort(got.begin(), got.end());
  // <|cfg|>: the config says it is not special (it wins), and the template does not write it.
  EXPECT_EQ(got, (std::vector<std::string>{"<tool>", "<|ctl|>"}));
}

TEST(ChatTemplateTest, Qwen3SpansKeepTheReasoningTheFinalTextWrites) {
  ChatTemplate t = Load("qwen3.jinja", {{"eos_token", "<|im_end|>"}});
  json record = json::parse(R"({"messages": [
      {"role": "user", "content": "Q1"},
      {"role": "assistant", "content": "A1", "reasoning_content": "R1"},
      {"role": "user", "content": "Q2"},
      {"role": "assistant", "content": "A2", "reasoning_content": "\nR2\n"}]})");
  // The first turn's reasoning is dropped by the template (before the last user query); the
  // last turn's is written, trimmed.
  EXPECT_EQ(Trained(t, record, TrainOn::kAssistant),
            (std::vector<std::string>{"A1<|im_end|>", "<think>\nR2\n</think>\n\nA2<|im_end|>"}));
  EXPECT_EQ(Trained(t, record, TrainOn::kLast),
            (std::vector<std::string>{"<think>\nR2\n</think>\n\nA2<|im_end|>"}));
}

TEST(ChatTemplateTest, MistralMovesTheSystemPromptAndStillFindsTheTurns) {
  ChatTemplate t = Load("mistral_nemo.jinja", {{"bos_token", "<s>"}, {"eos_token", "</s>"}});
  json record = json::parse(R"({"messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"},
      {"role": "user", "content": "Bye"}, {"role": "assistant", "content": "Bye!"}]})");
  EXPECT_EQ(Trained(t, record, TrainOn::kAssistant),
            (std::vector<std::string>{"Hello</s>", "Bye!</s>"}));
}

TEST(ChatTemplateTest, PromptCompletionTrainsTheCompletion) {
  ChatTemplate t = Load("qwen2_5.jinja", {{"eos_token", "<|im_end|>"}});
  json record = json::parse(R"({"prompt": "Say hi", "completion": "hi"})");
  EXPECT_EQ(Trained(t, record, TrainOn::kCompletion), (std::vector<std::string>{"hi<|im_end|>"}));
}

TEST(ChatTemplateTest, BadConversationsAreRefused) {
  auto error = [](const char* record) {
    Result<Conversation> c = ParseConversation(json::parse(record));
    return c.ok() ? std::string("ok") : c.status().message();
  };
  EXPECT_EQ(error(R"({"text": "x"})"),
            "the record has no conversation (a \"messages\", \"conversations\", or \"prompt\" + "
            "\"completion\" field)");
  EXPECT_EQ(error(R"({"messages": [{"role": "bot", "content": "x"}]})"),
            "message 0 has an unknown role 'bot' (system, user, assistant or tool)");
  EXPECT_EQ(error(R"({"messages": [{"role": "user", "content": {"a": 1}}]})"),
            "message 0: content must be a string or a list of parts");
  EXPECT_EQ(error(R"({"messages": [{"role": "assistant"}]})"),
            "message 0: an assistant turn with no content and no tool call");
  EXPECT_EQ(
      error(
          R"({"conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}]})"),
      "ok");
}

}  // namespace
}  // namespace stoker
