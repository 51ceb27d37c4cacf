#include "text/model_files.h"

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/file_util.h"

namespace stoker {
namespace {

using Json = nlohmann::json;

bool IsBase64Char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/' || c == '=';
}

// "BASE64 DIGITS" up to the line end (or the end of `head`, which may cut a line).
bool LooksLikeTiktokenLine(std::string_view head) {
  size_t i = 0;
  while (i < head.size() && IsBase64Char(head[i])) ++i;
  if (i == 0 || i % 4 != 0 || i >= head.size() || head[i] != ' ') return false;
  size_t digits = ++i;
  while (i < head.size() && head[i] >= '0' && head[i] <= '9') ++i;
  if (i == digits) return false;
  return i == head.size() || head[i] == '\n' || head[i] == '\r';
}

// tokenizer_config.json gives a token as "text" or as {"content": "text", ...}.
Result<std::optional<std::string>> TokenField(const Json& j, const char* key,
                                              std::string_view origin) {
  if (!j.contains(key) || j[key].is_null()) return std::optional<std::string>();
  const Json& v = j[key];
  if (v.is_string()) return std::optional<std::string>(v.get<std::string>());
  if (v.is_object() && v.contains("content") && v["content"].is_string()) {
    return std::optional<std::string>(v["content"].get<std::string>());
  }
  return InvalidArgument(std::string(origin) + ": " + key +
                         ": must be a string or an object with a string 'content'");
}

Result<std::optional<bool>> BoolField(const Json& j, const char* key, std::string_view origin) {
  if (!j.contains(key) || j[key].is_null()) return std::optional<bool>();
  if (!j[key].is_boolean()) {
    return InvalidArgument(std::string(origin) + ": " + key + ": must be true or false");
  }
  return std::optional<bool>(j[key].get<bool>());
}

}  // namespace

TokenizerFormat SniffTokenizerFormat(std::string_view head) {
  if (head.substr(0, 3) == "\xEF\xBB\xBF") head.remove_prefix(3);  // a UTF-8 byte-order mark
  const size_t i = head.find_first_not_of(" \n\r\t");
  if (i != std::string_view::npos && head[i] == '{') return TokenizerFormat::kTokenizerJson;
  if (LooksLikeTiktokenLine(head)) return TokenizerFormat::kTiktoken;
  // ModelProto: field 1 (`pieces`, length-delimited) comes first in every file SentencePiece
  // writes; its tag is 0x0a.
  if (!head.empty() && head[0] == '\x0a') return TokenizerFormat::kSentencePiece;
  return TokenizerFormat::kUnknown;
}

Result<TokenizerConfig> ParseTokenizerConfig(std::string_view json, std::string_view origin) {
  Json j;
  try {
    j = Json::parse(json.begin(), json.end());
  } catch (const Json::parse_error& e) {
    return InvalidArgument(std::string(origin) + ": not valid JSON at byte " +
                           std::to_string(e.byte) + ": " + e.what());
  } catch (const Json::exception& e) {  // e.g. a number out of range: 5e1002
    return InvalidArgument(std::string(origin) + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) return InvalidArgument(std::string(origin) + ": must be a JSON object");
  TokenizerConfig c;
  STOKER_ASSIGN_OR_RETURN(c.eos_token, TokenField(j, "eos_token", origin));
  STOKER_ASSIGN_OR_RETURN(c.bos_token, TokenField(j, "bos_token", origin));
  STOKER_ASSIGN_OR_RETURN(c.add_bos_token, BoolField(j, "add_bos_token", origin));
  STOKER_ASSIGN_OR_RETURN(c.add_eos_token, BoolField(j, "add_eos_token", origin));
  // Read where they have their type only: they never made a config an error before.
  if (j.contains("tokenizer_class") && j["tokenizer_class"].is_string()) {
    c.tokenizer_class = j["tokenizer_class"].get<std::string>();
  }
  for (auto [key, field] :
       {std::pair("legacy", &c.legacy), std::pair("add_prefix_space", &c.add_prefix_space)}) {
    if (j.contains(key) && j[key].is_boolean()) *field = j[key].get<bool>();
  }
  return c;
}

bool DummyPrefixAtStartOnly(const TokenizerConfig& config) {
  const std::string cls = config.tokenizer_class.value_or("");
  return (cls == "LlamaTokenizer" || cls == "LlamaTokenizerFast") &&
         !config.legacy.value_or(false) && config.add_prefix_space.value_or(true);
}

Result<TokenizerConfig> ReadTokenizerConfigBeside(const std::string& tokenizer_path) {
  std::string path = JoinPath(DirName(tokenizer_path), "tokenizer_config.json");
  if (!PathExists(path)) return TokenizerConfig();
  Result<std::string> bytes = ReadFileToString(path);
  if (!bytes.ok()) return bytes.status().WithContext("tokenizer_config.json");
  return ParseTokenizerConfig(*bytes, path);
}

std::string TokenizerFileInDirectory(const std::string& dir) {
  for (const char* name : {"tokenizer.json", "tokenizer.model"}) {
    std::string path = JoinPath(dir, name);
    if (PathExists(path)) return path;
  }
  return {};
}

}  // namespace stoker
