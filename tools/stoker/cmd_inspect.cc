// `stoker inspect`: summary of any supported token data (stoker dataset, Megatron, nanoGPT, llm.c,
// .npy), or the token ids of one document.
#include <cstdio>
#include <optional>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "format/inspect.h"
#include "format/loss_mask.h"
#include "format/stoker_dataset.h"
#include "number_flags.h"
#include "stoker/token_source.h"
#include "stoker/tokenizer.h"

namespace stoker::cli {
namespace {

struct InspectArgs {
  std::string path;
  bool json = false;
  std::optional<uint64_t> show_document;
  std::string tokenizer;  // chat data: decode --show-document, trained runs marked
};

// The trained runs of a chat document are shown between these.
constexpr std::string_view kTrainedOpen = "\u27e6", kTrainedClose = "\u27e7";  // ⟦ ⟧

int ShowDocument(const InspectArgs& args, const TokenSource& source) {
  Result<std::unique_ptr<StokerDataset>> mask = OpenLossMask(source);
  if (!mask.ok()) return ReportError("inspect", mask.status());
  if (args.tokenizer.empty() || *mask == nullptr) {
    if (!args.tokenizer.empty()) {
      return ReportError("inspect", InvalidArgument("--tokenizer decodes a chat document's "
                                                    "trained text; " +
                                                    source.path() + " has no loss mask"));
    }
    Result<std::string> json = DocumentToJson(source, *args.show_document, mask->get());
    if (!json.ok()) return ReportError("inspect", json.status());
    std::printf("%s\n", json->c_str());
    return kExitOk;
  }
  TokenizerOptions options;
  options.post_processor = false;
  Result<std::unique_ptr<Tokenizer>> tokenizer = OpenTokenizer(args.tokenizer, options);
  if (!tokenizer.ok()) return ReportError("inspect", tokenizer.status());
  auto decode = [&](const std::vector<int32_t>& ids) -> Result<std::string> {
    std::string text;
    STOKER_RETURN_IF_ERROR((*tokenizer)->Decode(ids, &text));
    return text;
  };
  Result<MarkedDocument> doc =
      MarkTrainedText(source, *args.show_document, **mask, decode, kTrainedOpen, kTrainedClose);
  if (!doc.ok()) return ReportError("inspect", doc.status());
  std::printf("document %llu: %llu tokens, %llu trained (between %s and %s)\n%s\n",
              static_cast<unsigned long long>(*args.show_document),
              static_cast<unsigned long long>(doc->tokens),
              static_cast<unsigned long long>(doc->trained_tokens),
              std::string(kTrainedOpen).c_str(), std::string(kTrainedClose).c_str(),
              doc->text.c_str());
  return kExitOk;
}

int RunInspect(const InspectArgs& args) {
  Result<std::unique_ptr<TokenSource>> source = OpenTokenSource(args.path);
  if (!source.ok()) return ReportError("inspect", source.status());
  if (args.show_document) return ShowDocument(args, **source);
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
      "  stoker inspect out/dataset --show-document 0\n"
      "  stoker inspect out/sft --show-document 3 --tokenizer models/qwen3/");
  sub->add_option("DATASET", args->path, "dataset directory or token file")->required();
  sub->add_flag("--json", args->json, "print the summary as JSON (stable keys, for scripts)");
  sub->add_option("--show-document", args->show_document,
                  "print the token ids of document N (0-based, across all shards) as a JSON "
                  "array instead of the summary; for chat data, an object with its tokens and "
                  "loss_mask")
      ->check(WholeNumber<uint64_t>());
  sub->add_option("--tokenizer", args->tokenizer,
                  "chat data: with --show-document, print the document as text (decoded by this "
                  "tokenizer) with each trained run between \u27e6 and \u27e7");
  sub->callback([args, exit_code] { *exit_code = RunInspect(*args); });
}

}  // namespace stoker::cli
