// `stoker inspect`: summary of any supported token data (stoker dataset, Megatron, nanoGPT, llm.c,
// .npy), or the token ids of one document.
#include <cstdio>
#include <optional>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "format/inspect.h"
#include "number_flags.h"
#include "stoker/token_source.h"

namespace stoker::cli {
namespace {

struct InspectArgs {
  std::string path;
  bool json = false;
  std::optional<uint64_t> show_document;
};

int RunInspect(const InspectArgs& args) {
  Result<std::unique_ptr<TokenSource>> source = OpenTokenSource(args.path);
  if (!source.ok()) return ReportError("inspect", source.status());
  if (args.show_document) {
    Result<std::string> ids = DocumentToJson(**source, *args.show_document);
    if (!ids.ok()) return ReportError("inspect", ids.status());
    std::printf("%s\n", ids->c_str());
    return kExitOk;
  }
  InspectSummary summary = Inspect(**source);
  std::fputs(args.json ? summary.ToJson().c_str() : summary.ToText().c_str(), stdout);
  return kExitOk;
}

}  // namespace

void AddInspectCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<InspectArgs>();
  auto* sub = app.add_subcommand(
      "inspect",
      "Summarize token data: format, shards, documents, tokens, dtype, tokenizer and a histogram "
      "of document lengths.");
  sub->footer(
      "DATASET may be a stoker dataset directory, a Megatron prefix P (P.bin + P.idx) or either of "
      "its files, a .npy file, or a nanoGPT / llm.c .bin.\n"
      "Exit status: 0 ok, 2 error (one line on stderr naming the file).\n"
      "Examples:\n"
      "  stoker inspect out/dataset\n"
      "  stoker inspect --json my-corpus_text_document\n"
      "  stoker inspect out/dataset --show-document 0");
  sub->add_option("DATASET", args->path, "dataset directory or token file")->required();
  sub->add_flag("--json", args->json, "print the summary as JSON (stable keys, for scripts)");
  sub->add_option("--show-document", args->show_document,
                  "print the token ids of document N (0-based, across all shards) as a JSON "
                  "array instead of the summary")
      ->check(WholeNumber<uint64_t>());
  sub->callback([args, exit_code] { *exit_code = RunInspect(*args); });
}

}  // namespace stoker::cli
