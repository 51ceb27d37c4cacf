#include "text/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include "common/file_util.h"
#include "common/hash.h"

namespace stoker {

Result<SentencePieceSpecialIds> ResolveSentencePieceSpecials(
    const SentencePieceOptions& options, const std::string& path, int64_t vocab_size,
    int32_t model_eos, int32_t model_bos, const std::function<int32_t(const std::string&)>& find) {
  // A piece of the model by its text, or (for `allow_number`) a decimal id; -1 if neither.
  auto find_piece = [&](const std::string& text, bool allow_number) -> int32_t {
    const int32_t id = find(text);
    if (id >= 0) return id;
    if (allow_number && !text.empty() && text.size() < 10 &&
        text.find_first_not_of("0123456789") == std::string::npos) {
      const int64_t n = std::stoll(text);
      if (n < vocab_size) return static_cast<int32_t>(n);
    }
    return -1;
  };
  if (model_eos < 0 && options.eos.empty()) {
    return InvalidArgument(path +
                           ": the SentencePiece model has no EOS piece (train it with "
                           "--eos_id=N, N >= 0)");
  }
  SentencePieceSpecialIds ids;
  ids.eos_id = model_eos;
  if (!options.eos.empty()) {
    ids.eos_id = find_piece(options.eos, /*allow_number=*/true);
    if (ids.eos_id < 0) {
      return InvalidArgument(path + ": the EOS '" + options.eos +
                             "' is neither a piece of the SentencePiece model nor an id");
    }
  }
  if (options.add_bos) {
    ids.bos_id = options.bos.empty() ? model_bos : find_piece(options.bos, /*allow_number=*/false);
    if (ids.bos_id < 0) {
      return InvalidArgument(path + ": add_bos_token is set but the BOS '" + options.bos +
                             "' is not a piece of the SentencePiece model");
    }
  }
  return ids;
}

Result<std::unique_ptr<SentencePieceTokenizer>> SentencePieceTokenizer::Open(
    const std::string& path, const Options& options) {
  // Read the bytes ourselves: one read serves both the checksum and the parse.
  Result<std::string> bytes = ReadFileToString(path);
  if (!bytes.ok()) return bytes.status().WithContext("SentencePiece model");
  auto processor = std::make_unique<sentencepiece::SentencePieceProcessor>();
  auto loaded = processor->LoadFromSerializedProto(*bytes);
  if (!loaded.ok()) {
    return InvalidArgument(path + ": not a valid SentencePiece model (" +
                           std::string(loaded.message()) + ")");
  }
  auto find = [&](const std::string& text) {
    const int id = processor->PieceToId(absl::string_view(text));
    return id >= 0 && processor->IdToPiece(id) == text ? id : -1;
  };
  STOKER_ASSIGN_OR_RETURN(
      SentencePieceSpecialIds ids,
      ResolveSentencePieceSpecials(options, path, processor->GetPieceSize(), processor->eos_id(),
                                   processor->bos_id(), find));
  std::unique_ptr<SentencePieceTokenizer> t(new SentencePieceTokenizer());
  t->vocab_size_ = static_cast<uint64_t>(processor->GetPieceSize());
  t->eos_id_ = ids.eos_id;
  t->bos_id_ = ids.bos_id;
  t->identity_ = {"sentencepiece", BaseName(path) + (t->bos_id_ >= 0 ? " add-bos" : ""),
                  Xxh3Hex(Xxh3(bytes->data(), bytes->size()))};
  t->processor_ = std::move(processor);
  return t;
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

Status SentencePieceTokenizer::Encode(std::string_view utf8, std::vector<int32_t>* ids) const {
  std::vector<int> piece_ids;
  auto st = processor_->Encode(absl::string_view(utf8.data(), utf8.size()), &piece_ids);
  if (!st.ok()) return Internal("SentencePiece encode failed: " + std::string(st.message()));
  if (bos_id_ >= 0) ids->push_back(bos_id_);
  ids->insert(ids->end(), piece_ids.begin(), piece_ids.end());
  return Status::OK();
}

Status SentencePieceTokenizer::Decode(std::span<const int32_t> ids, std::string* out) const {
  std::vector<int> pieces;
  for (int32_t id : ids) {
    if (id < 0 || static_cast<uint64_t>(id) >= vocab_size_) {
      return OutOfRange("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                        std::to_string(vocab_size_) + ")");
    }
    pieces.push_back(id);
  }
  std::string text;
  auto st = processor_->Decode(pieces, &text);
  if (!st.ok()) return Internal("SentencePiece decode failed: " + std::string(st.message()));
  *out += text;
  return Status::OK();
}

}  // namespace stoker
