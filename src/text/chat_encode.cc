#include "text/chat_encode.h"

#include <span>

#include "text/chat_template.h"

namespace stoker {
namespace {

struct Piece {
  std::string text;
  bool as_text = false;  // a control token's text that came from the conversation
  bool after_break = false;
};

// transformers' encode_marked_chat: [text, marked token, text, ...]; a lone marker breaks text.
std::vector<Piece> SplitMarked(const std::string& s) {
  std::vector<Piece> out(1);
  for (size_t i = 0; i < s.size();) {
    // Both marks start with the byte 0xF3: copy the text up to the next one at once.
    const size_t next = s.find(kChatMarkStart[0], i);
    if (next != i) {
      const size_t stop = next == std::string::npos ? s.size() : next;
      out.back().text.append(s, i, stop - i);
      i = stop;
      continue;
    }
    if (s.compare(i, 4, kChatMarkStart) == 0) {
      size_t e = s.find(kChatMarkEnd, i + 4);
      size_t next_start = s.find(kChatMarkStart, i + 4);
      if (e != std::string::npos && (next_start == std::string::npos || e < next_start)) {
        out.push_back(Piece{s.substr(i + 4, e - i - 4), true, true});
        out.push_back(Piece{"", false, true});
        i = e + 4;
        continue;
      }
      out.push_back(Piece{"", false, true});
      i += 4;
      continue;
    }
    if (s.compare(i, 4, kChatMarkEnd) == 0) {
      out.push_back(Piece{"", false, true});
      i += 4;
      continue;
    }
    out.back().text += s[i++];
  }
  return out;
}

}  // namespace

Result<ChatIds> EncodeChat(const Tokenizer& control, const Tokenizer& plain,
                           const std::string& marked, const std::string& text,
                           const std::vector<std::pair<size_t, size_t>>& trained,
                           std::span<const int32_t> token_bytes) {
  std::vector<Piece> pieces = SplitMarked(marked);
  std::vector<int32_t> newline_ids;
  STOKER_RETURN_IF_ERROR(control.Encode("\n", &newline_ids));
  ChatIds out;
  std::vector<size_t> starts;  // byte offset of each token in `text`
  size_t offset = 0;
  std::string rebuilt;
  for (size_t k = 0; k < pieces.size(); ++k) {
    const Piece& p = pieces[k];
    if (p.text.empty()) continue;
    const Tokenizer& tok = p.as_text ? plain : control;
    std::vector<int32_t> ids;
    if (k == 0) {
      STOKER_RETURN_IF_ERROR(tok.Encode(p.text, &ids));
    } else {
      // Encoded after a newline that is then removed, as transformers does (no SentencePiece
      // prefix space in the middle of a chat).
      STOKER_RETURN_IF_ERROR(tok.Encode("\n" + p.text, &ids));
      if (ids.size() >= newline_ids.size() &&
          std::equal(newline_ids.begin(), newline_ids.end(), ids.begin())) {
        ids.erase(ids.begin(), ids.begin() + long(newline_ids.size()));
      } else {
        ids.clear();
        STOKER_RETURN_IF_ERROR(tok.Encode(p.text, &ids));
      }
    }
    size_t piece_bytes = 0;
    for (int32_t id : ids) {
      starts.push_back(offset + piece_bytes);
      if (id >= 0 && size_t(id) < token_bytes.size() && token_bytes[size_t(id)] >= 0) {
        piece_bytes += size_t(token_bytes[size_t(id)]);
        continue;
      }
      std::string bytes;
      STOKER_RETURN_IF_ERROR(control.Decode(std::span<const int32_t>(&id, 1), &bytes));
      piece_bytes += bytes.size();
    }
    if (piece_bytes != p.text.size()) {
      return Unimplemented(
          "the tokens of a chat cannot be aligned with its text (their bytes do not add up); "
          "loss masks need a byte-level BPE tokenizer");
    }
    offset += piece_bytes;
    rebuilt += p.text;
    out.ids.insert(out.ids.end(), ids.begin(), ids.end());
  }
  if (rebuilt != text) {
    return Internal("the chat rendered with marked control tokens differs from its text");
  }
  out.mask.assign(out.ids.size(), 0);
  for (size_t t = 0; t < out.ids.size(); ++t) {
    size_t b = starts[t], e = t + 1 < starts.size() ? starts[t + 1] : text.size();
    for (const auto& [s, f] : trained) {
      if (b < f && s < e) {
        out.mask[t] = 1;
        break;
      }
      if (b == e && s <= b && b < f) out.mask[t] = 1;
    }
  }
  return out;
}

std::vector<int32_t> TokenBytes(const Tokenizer& tokenizer) {
  std::vector<int32_t> out(tokenizer.vocab_size(), -1);
  std::string bytes;
  for (size_t id = 0; id < out.size(); ++id) {
    const int32_t one = int32_t(id);
    bytes.clear();
    if (tokenizer.Decode(std::span<const int32_t>(&one, 1), &bytes).ok()) {
      out[id] = int32_t(bytes.size());
    }
  }
  return out;
}

}  // namespace stoker
