#include "text/bpe_options.h"

#include <charconv>

namespace stoker {
namespace {

bool ParseInt32(std::string_view s, int32_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && *out >= 0;
}

}  // namespace

Result<std::vector<AddedTokens::Token>> ParseSpecialTokens(std::string_view spec) {
  std::vector<AddedTokens::Token> out;
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    size_t eq = item.rfind('=');
    int32_t id = 0;
    if (eq == std::string_view::npos || eq == 0 || !ParseInt32(item.substr(eq + 1), &id)) {
      return InvalidArgument("--special: '" + std::string(item) +
                             "' is not NAME=ID (ID a non-negative int32)");
    }
    out.push_back({std::string(item.substr(0, eq)), id});
  }
  return out;
}

Result<int32_t> ResolveEos(std::string_view requested, const std::vector<AddedTokens::Token>& named,
                           uint64_t vocab_size, std::string_view origin) {
  if (!requested.empty()) {
    for (const auto& t : named) {
      if (t.content == requested) return t.id;
    }
    int32_t id = 0;
    if (ParseInt32(requested, &id)) {
      if (static_cast<uint64_t>(id) < vocab_size) return id;
      return InvalidArgument(std::string(origin) + ": --eos " + std::string(requested) +
                             " is outside the vocabulary (size " + std::to_string(vocab_size) +
                             ")");
    }
    return InvalidArgument(std::string(origin) + ": --eos '" + std::string(requested) +
                           "' is neither a token of the tokenizer nor an id");
  }
  for (std::string_view name : {"<|endoftext|>", "<|end_of_text|>", "</s>", "<eos>"}) {
    for (const auto& t : named) {
      if (t.content == name) return t.id;
    }
  }
  return InvalidArgument(std::string(origin) +
                         ": no end-of-text token (<|endoftext|>, <|end_of_text|>, </s>, <eos>) "
                         "among the special tokens; name one with --eos");
}

}  // namespace stoker
