// `stoker tokenize`: text on stdin -> token ids on stdout (one line, space separated), or with
// --decode ids on stdin -> text; for checking a tokenizer against its reference library.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "stoker/tokenizer.h"
#include "tokenizer_flags.h"

namespace stoker::cli {
namespace {

struct TokenizeArgs {
  std::string tokenizer;
  TokenizerOptions options;
  bool decode = false;
  bool eos = false;
  bool jsonl = false;
};

std::string IdsLine(const std::vector<int32_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ' ';
    out += std::to_string(ids[i]);
  }
  out += '\n';
  return out;
}

// --jsonl: each stdin line is a JSON string; each stdout line holds its ids.
int EncodeJsonLines(const Tokenizer& tok, const std::string& input, bool eos) {
  std::istringstream in(input);
  std::string line, out;
  for (size_t line_no = 1; std::getline(in, line); ++line_no) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_string()) {
      return ReportError("tokenize", InvalidArgument("stdin:" + std::to_string(line_no) +
                                                     ": expected a JSON string"));
    }
    std::vector<int32_t> ids;
    Status st = tok.Encode(j.get_ref<const std::string&>(), &ids);
    if (!st.ok())
      return ReportError("tokenize", st.WithContext("stdin:" + std::to_string(line_no)));
    if (eos) ids.push_back(tok.eos_id());
    out += IdsLine(ids);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

int RunTokenize(const TokenizeArgs& a) {
  Result<std::unique_ptr<Tokenizer>> tok = OpenTokenizer(a.tokenizer, a.options);
  if (!tok.ok()) return ReportError("tokenize", tok.status());
  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  if (a.jsonl) return EncodeJsonLines(**tok, input, a.eos);
  if (a.decode) {
    std::vector<int32_t> ids;
    std::istringstream in(input);
    long long v;
    while (in >> v) {
      if (v < INT32_MIN || v > INT32_MAX) {
        return ReportError("tokenize", InvalidArgument("id " + std::to_string(v) +
                                                       " on stdin does not fit int32"));
      }
      ids.push_back(static_cast<int32_t>(v));
    }
    if (!in.eof()) {
      return ReportError("tokenize",
                         InvalidArgument("stdin: expected token ids (integers) for --decode"));
    }
    std::string text;
    Status st = (*tok)->Decode(ids, &text);
    if (!st.ok()) return ReportError("tokenize", st);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  }
  std::vector<int32_t> ids;
  Status st = (*tok)->Encode(input, &ids);
  if (!st.ok()) return ReportError("tokenize", st.WithContext("stdin"));
  if (a.eos) ids.push_back((*tok)->eos_id());
  std::string out = IdsLine(ids);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

}  // namespace

void AddTokenizeCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<TokenizeArgs>();
  auto* sub = app.add_subcommand(
      "tokenize", "Encode stdin to token ids (or --decode ids back to text), for checking");
  sub->footer(
      "Example: stoker tokenize --tokenizer cl100k_base.tiktoken --pattern cl100k < doc.txt\n"
      "The ids are printed on one line, separated by spaces, without EOS unless --eos-id.");
  sub->add_option("--tokenizer", args->tokenizer,
                  "bytes | PATH.model | PATH/tokenizer.json | PATH.tiktoken")
      ->required();
  AddBpeTokenizerFlags(sub, &args->options);
  sub->add_flag("--decode", args->decode, "Read ids from stdin and write the text");
  sub->add_flag("--eos-id", args->eos, "Append the EOS id, as pack does");
  sub->add_flag("--jsonl", args->jsonl,
                "Each stdin line is a JSON string; print one line of ids for each");
  sub->callback([args, exit_code] { *exit_code = RunTokenize(*args); });
}

}  // namespace stoker::cli
