#include "text/tokenizer.h"

#include <cstdio>

#include "common/file_util.h"
#include "common/uri.h"
#include "text/bytes_tokenizer.h"
#include "text/model_files.h"
#include "text/sentencepiece_bpe.h"
#include "text/sentencepiece_tokenizer.h"
#include "text/sentencepiece_unigram.h"
#include "text/tiktoken_file.h"
#include "text/tokenizer_json.h"

namespace stoker {
namespace {

// The format of the file at `path` from its first 4 KiB, else from its name (so that an empty or
// unreadable file still gets its own loader's error).
TokenizerFormat FormatOf(const std::string& path) {
  std::string head(4096, '\0');
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    head.resize(std::fread(head.data(), 1, head.size(), f));
    std::fclose(f);
    TokenizerFormat sniffed = SniffTokenizerFormat(head);
    if (sniffed != TokenizerFormat::kUnknown) return sniffed;
  }
  if (path.ends_with(".model")) return TokenizerFormat::kSentencePiece;
  if (path.ends_with(".json")) return TokenizerFormat::kTokenizerJson;
  if (path.ends_with(".tiktoken")) return TokenizerFormat::kTiktoken;
  return TokenizerFormat::kUnknown;
}

}  // namespace

Status Tokenizer::Decode(std::span<const int32_t> ids, std::string* out) const {
  return Unimplemented("the " + identity().kind + " tokenizer cannot decode");
}

Status Tokenizer::TokenText(int32_t id, std::string* out, TokenTextFlags* flags) const {
  *flags = TokenTextFlags{};
  return Decode(std::span<const int32_t>(&id, 1), out);
}

bool Tokenizer::ModelPieceText(int32_t, std::string*) const { return false; }

Result<std::unique_ptr<Tokenizer>> OpenTokenizer(std::string_view uri,
                                                 const TokenizerOptions& options) {
  STOKER_ASSIGN_OR_RETURN(std::string path, LocalPathFromUri(uri));
  if (path == "bytes") return std::unique_ptr<Tokenizer>(std::make_unique<BytesTokenizer>());
  if (IsDirectory(path)) {
    std::string file = TokenizerFileInDirectory(path);
    if (file.empty()) {
      return NotFound(path + ": the directory holds no tokenizer.json or tokenizer.model");
    }
    path = file;
  }
  // A model's tokenizer_config.json names its EOS and BOS; --eos still wins.
  STOKER_ASSIGN_OR_RETURN(TokenizerConfig config, ReadTokenizerConfigBeside(path));
  TokenizerOptions opts = options;
  if (opts.eos.empty() && config.eos_token) opts.eos = *config.eos_token;
  switch (FormatOf(path)) {
    case TokenizerFormat::kSentencePiece: {
      SentencePieceTokenizer::Options sp;
      sp.eos = opts.eos;
      sp.add_bos = options.post_processor && config.add_bos_token.value_or(false);
      sp.bos = config.bos_token.value_or("");
      // A Unigram model, and a BPE model stoker reproduces exactly, run on stoker's own code;
      // any other goes through libsentencepiece (text/sentencepiece_bpe.h says which).
      Result<std::string> bytes = ReadFileToString(path);
      if (bytes.ok()) {
        Result<SentencePieceModel> parsed = ParseSentencePieceModel(*bytes, path);
        if (parsed.ok() && parsed->model_type == 1) {
          STOKER_ASSIGN_OR_RETURN(auto t, SentencePieceUnigram::Open(*parsed, *bytes, path, sp));
          return std::unique_ptr<Tokenizer>(std::move(t));
        }
        std::string why;
        Result<std::unique_ptr<BpeTokenizer>> native = OpenSentencePieceBpe(*bytes, path, sp, &why);
        if (native.ok() && *native) return std::unique_ptr<Tokenizer>(std::move(native).value());
        // Otherwise (not a model, or options it lacks) the library says so, as before.
      }
      STOKER_ASSIGN_OR_RETURN(auto t, SentencePieceTokenizer::Open(path, sp));
      return std::unique_ptr<Tokenizer>(std::move(t));
    }
    case TokenizerFormat::kTokenizerJson: {
      STOKER_ASSIGN_OR_RETURN(auto t, OpenTokenizerJson(path, opts));
      return std::unique_ptr<Tokenizer>(std::move(t));
    }
    case TokenizerFormat::kTiktoken: {
      STOKER_ASSIGN_OR_RETURN(auto t, OpenTiktokenFile(path, opts));
      return std::unique_ptr<Tokenizer>(std::move(t));
    }
    case TokenizerFormat::kUnknown:
      break;
  }
  return InvalidArgument("unknown tokenizer '" + path +
                         "': expected 'bytes', a tokenizer.json, a tiktoken file, a SentencePiece "
                         "model or a directory holding tokenizer.json or tokenizer.model");
}

}  // namespace stoker
