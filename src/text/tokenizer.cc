#include "text/tokenizer.h"

#include "common/file_util.h"
#include "common/uri.h"
#include "text/bytes_tokenizer.h"
#include "text/sentencepiece_tokenizer.h"

namespace stoker {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> OpenTokenizer(std::string_view uri) {
  STOKER_ASSIGN_OR_RETURN(const std::string path, LocalPathFromUri(uri));
  const std::string_view spec = path;
  if (spec == "bytes") return std::unique_ptr<Tokenizer>(std::make_unique<BytesTokenizer>());
  if (EndsWith(spec, ".model")) {
    STOKER_ASSIGN_OR_RETURN(auto sp, SentencePieceTokenizer::Open(path));
    return std::unique_ptr<Tokenizer>(std::move(sp));
  }
  if (EndsWith(spec, "tokenizer.json") || EndsWith(spec, ".tiktoken") ||
      (IsDirectory(path) && PathExists(JoinPath(path, "tokenizer.json")))) {
    return Unimplemented(path +
                         ": byte-level BPE (tokenizer.json / tiktoken) is not supported "
                         "yet; use --tokenizer bytes or a SentencePiece .model");
  }
  return InvalidArgument("unknown tokenizer '" + path +
                         "': expected 'bytes', PATH.model (SentencePiece) or PATH/tokenizer.json");
}

}  // namespace stoker
