// libFuzzer target: SentencePiece `.model` bytes through stoker's protobuf reader
// (text/sentencepiece_model.h) and, when it yields a BPE model stoker encodes itself, through
// OpenSentencePieceBpe, Encode and Decode (text/sentencepiece_bpe.h); and any bytes as text through
// the SentencePiece normalizer and the cut before "▁". Every path returns a value or an error
// naming the file, never crashes or reads out of bounds; the cut's pieces are the text again.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "text/sentencepiece_bpe.h"
#include "text/sentencepiece_model.h"
#include "text/sp_text.h"
#include "text/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto m = stoker::ParseSentencePieceModel(bytes, "fuzz.model");
  if (!m.ok() && m.status().message().find("fuzz.model") == std::string::npos) __builtin_trap();

  // The text steps on the input as text (valid UTF-8 only, as the tokenizers get).
  std::string text;
  stoker::AppendReplacingInvalidUtf8(bytes.substr(0, 4096), &text);
  for (bool extra : {false, true}) {
    stoker::TextEdit e;
    e.kind = stoker::TextEdit::Kind::kSentencePiece;
    e.remove_extra_whitespaces = extra;
    std::string out;
    stoker::ApplyTextEdit(e, text, &out);
    if (out.find(' ') != std::string::npos) __builtin_trap();
    for (bool every : {false, true}) {
      std::string joined;
      stoker::CutBeforeMarker(out, stoker::kMetaSymbol, every, [&](std::string_view p) {
        if (p.empty()) __builtin_trap();
        joined.append(p);
      });
      if (joined != out) __builtin_trap();
    }
  }

  if (!m.ok()) return 0;
  std::string why;
  auto t = stoker::OpenSentencePieceBpe(bytes, "fuzz.model", {}, &why);
  if (!t.ok()) {
    if (t.status().message().find("fuzz.model") == std::string::npos) __builtin_trap();
    return 0;
  }
  if (!*t) return 0;  // left to libsentencepiece
  std::vector<int32_t> ids;
  if (!(*t)->Encode(text, &ids).ok()) __builtin_trap();
  for (int32_t id : ids) {
    if (id < 0 || static_cast<uint64_t>(id) >= (*t)->vocab_size()) __builtin_trap();
  }
  std::string back;
  if (!(*t)->Decode(ids, &back).ok()) __builtin_trap();
  return 0;
}
