#include "chat/chat_encode.h"

#include <deque>
#include <span>

#include "chat/chat_align.h"
#include "chat/chat_template.h"

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
    const bool start = s.compare(i, 4, kChatMarkStart) == 0;
    if (start || s.compare(i, 4, kChatMarkEnd) == 0) {
      // A start mark closed before the next start mark: what is between is a marked token.
      const size_t e = start ? s.find(kChatMarkEnd, i + 4) : std::string::npos;
      if (e != std::string::npos && e < s.find(kChatMarkStart, i + 4)) {
        out.push_back(Piece{s.substr(i + 4, e - i - 4), true, true});
        i = e;
      }
      out.push_back(Piece{"", false, true});  // what follows a mark is a piece of its own
      i += 4;
      continue;
    }
    out.back().text += s[i++];
  }
  return out;
}

}  // namespace

StrippedEnds ProbeStrippedEnds(const Tokenizer& tokenizer) {
  std::vector<int32_t> plain, left, right;
  StrippedEnds out;
  if (!tokenizer.Encode("a", &plain).ok()) return out;
  // Any of these: a tab or a newline may be an added token (Gemma's tabs), a space may have
  // become "▁" before the Strip.
  for (const char* ws : {"\t", "\n", " "}) {
    left.clear();
    right.clear();
    if (tokenizer.Encode(ws + std::string("a"), &left).ok() && left == plain) out.left = true;
    if (tokenizer.Encode("a" + std::string(ws), &right).ok() && right == plain) out.right = true;
  }
  return out;
}

std::string StripChatMarks(const std::string& marked) {
  std::string out;
  for (const Piece& p : SplitMarked(marked)) out += p.text;
  return out;
}

Result<ChatIds> EncodeChat(const Tokenizer& control, const Tokenizer& plain,
                           const std::string& marked, const std::string& text,
                           const std::vector<std::pair<size_t, size_t>>& trained,
                           const TokenTexts& texts) {
  const StrippedEnds strip = texts.probed ? texts.strip : ProbeStrippedEnds(control);
  std::vector<Piece> pieces = SplitMarked(marked);
  std::vector<int32_t> newline_ids;
  STOKER_RETURN_IF_ERROR(control.Encode("\n", &newline_ids));
  ChatIds out;
  std::vector<TokenRange> ranges;  // each token's bytes in `text`
  size_t offset = 0;
  std::string rebuilt;
  std::vector<AlignedToken> aligned;
  std::deque<std::string> looked_up;  // the texts of ids outside `texts`
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
    aligned.resize(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      const size_t id = static_cast<size_t>(ids[i]);
      aligned[i].piece = {};
      if (id < texts.known.size() && texts.known[id]) {
        aligned[i].bytes = texts.bytes[id];  // field by field: no temporary to copy from
        aligned[i].flags = texts.flags[id];
        if (aligned[i].flags.added) {
          const auto it = texts.pieces.find(ids[i]);
          if (it != texts.pieces.end()) aligned[i].piece = it->second;
        }
        continue;
      }
      STOKER_RETURN_IF_ERROR(
          control.TokenText(ids[i], &looked_up.emplace_back(), &aligned[i].flags));
      aligned[i].bytes = looked_up.back();
      if (aligned[i].flags.added && control.ModelPieceText(ids[i], &looked_up.emplace_back())) {
        aligned[i].piece = looked_up.back();
      }
    }
    STOKER_ASSIGN_OR_RETURN(std::vector<TokenRange> piece_ranges,
                            AlignTokens(p.text, aligned, strip));
    for (const TokenRange& r : piece_ranges) {
      ranges.push_back(TokenRange{offset + r.begin, offset + r.end});
    }
    offset += p.text.size();
    rebuilt += p.text;
    out.ids.insert(out.ids.end(), ids.begin(), ids.end());
  }
  if (rebuilt != text) {
    return Internal("the chat rendered with marked control tokens differs from its text");
  }
  out.mask.assign(out.ids.size(), 0);
  for (size_t t = 0; t < out.ids.size(); ++t) {
    const auto [b, e] = std::pair(ranges[t].begin, ranges[t].end);
    for (const auto& [s, f] : trained) {
      if ((b < f && s < e) || (b == e && s <= b && b < f)) {
        out.mask[t] = 1;
        break;
      }
    }
  }
  return out;
}

TokenTexts ReadTokenTexts(const Tokenizer& tokenizer) {
  TokenTexts out;
  out.probed = true;
  out.strip = ProbeStrippedEnds(tokenizer);
  const size_t n = tokenizer.vocab_size();
  out.known.assign(n, 0);
  out.flags.assign(n, TokenTextFlags{});
  std::string bytes;
  for (size_t id = 0; id < n; ++id) {
    bytes.clear();
    out.known[id] = tokenizer.TokenText(int32_t(id), &bytes, &out.flags[id]).ok();
    out.bytes.Add(out.known[id] ? bytes : std::string());
    bytes.clear();
    if (out.known[id] && out.flags[id].added && tokenizer.ModelPieceText(int32_t(id), &bytes)) {
      out.pieces.emplace(int32_t(id), bytes);
    }
  }
  return out;
}

}  // namespace stoker
