#include "text/tokenizer.h"

#include "common/file_util.h"
#include "common/uri.h"
#include "text/bytes_tokenizer.h"
#include "text/sentencepiece_tokenizer.h"
#include "text/tiktoken_file.h"
#include "text/tokenizer_json.h"

namespace stoker {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

Status Tokenizer::Decode(std::span<const int32_t> ids, std::string* out) const {
  return Unimplemented("the " + identity().kind + " tokenizer cannot decode");
}

Result<std::unique_ptr<Tokenizer>> OpenTokenizer(std::string_view uri,
                                                 const TokenizerOptions& options) {
  STOKER_ASSIGN_OR_RETURN(std::string path, LocalPathFromUri(uri));
  const std::string spec = path;
  if (spec == "bytes") return std::unique_ptr<Tokenizer>(std::make_unique<BytesTokenizer>());
  if (EndsWith(spec, ".model")) {
    STOKER_ASSIGN_OR_RETURN(auto sp, SentencePieceTokenizer::Open(path));
    return std::unique_ptr<Tokenizer>(std::move(sp));
  }
  if (IsDirectory(path) && PathExists(JoinPath(path, "tokenizer.json"))) {
    path = JoinPath(path, "tokenizer.json");
  }
  if (EndsWith(path, ".json")) {
    STOKER_ASSIGN_OR_RETURN(auto bpe, OpenTokenizerJson(path, options));
    return std::unique_ptr<Tokenizer>(std::move(bpe));
  }
  if (EndsWith(path, ".tiktoken")) {
    STOKER_ASSIGN_OR_RETURN(auto bpe, OpenTiktokenFile(path, options));
    return std::unique_ptr<Tokenizer>(std::move(bpe));
  }
  return InvalidArgument("unknown tokenizer '" + path +
                         "': expected 'bytes', PATH.model (SentencePiece), PATH/tokenizer.json "
                         "or PATH.tiktoken");
}

}  // namespace stoker
