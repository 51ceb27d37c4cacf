#include "text/token_decoder.h"

#include "text/sp_text.h"
#include "text/utf8.h"

namespace stoker {
namespace {

constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

size_t CharLen(std::string_view s, size_t i) {
  return std::min(Utf8SequenceLength(static_cast<uint8_t>(s[i])), s.size() - i);
}

// Bytes from byte tokens: the string when valid UTF-8, else one U+FFFD per byte (ByteFallback).
void FlushBytes(std::string* bytes, size_t count, std::vector<std::string>* out) {
  if (count == 0) return;
  if (FindInvalidUtf8(*bytes) == std::string_view::npos) {
    out->push_back(*bytes);
  } else {
    for (size_t i = 0; i < count; ++i) out->emplace_back(kReplacementChar);
  }
  bytes->clear();
}

}  // namespace

// u8::from_str_radix(&token[3..5], 16) of a 6-byte "<0x..>": two hex digits, or "+" and one.
int ByteFallbackValue(std::string_view t) {
  if (t.size() != 6 || !t.starts_with("<0x") || t.back() != '>') return -1;
  if (t[3] == '+') return HexDigit(t[4]);
  const int hi = HexDigit(t[3]), lo = HexDigit(t[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

TokenDecoder TokenDecoder::Chain(std::vector<Step> steps) {
  TokenDecoder d;
  d.kind_ = Kind::kChain;
  d.steps_ = std::move(steps);
  return d;
}

TokenDecoder TokenDecoder::SentencePiece(std::vector<PieceKind> kinds, std::string unk_surface,
                                         bool strip_dummy_prefix, bool remove_extra_whitespaces) {
  TokenDecoder d;
  d.kind_ = Kind::kSentencePiece;
  d.kinds_ = std::move(kinds);
  d.unk_surface_ = std::move(unk_surface);
  d.strip_dummy_prefix_ = strip_dummy_prefix;
  d.remove_extra_whitespaces_ = remove_extra_whitespaces;
  return d;
}

void TokenDecoder::Decode(std::span<const std::string_view> tokens, std::span<const int32_t> ids,
                          std::string* out) const {
  switch (kind_) {
    case Kind::kBytes:
      for (std::string_view t : tokens) out->append(t);
      return;
    case Kind::kChain:
      return DecodeChain(tokens, out);
    case Kind::kSentencePiece:
      return DecodeSentencePiece(tokens, ids, out);
  }
}

std::string TokenDecoder::Surface(std::string_view token, int32_t id) const {
  if (kind_ == Kind::kBytes) return std::string(token);
  if (kind_ == Kind::kSentencePiece) {
    const size_t i = static_cast<size_t>(id);
    const PieceKind k = i < kinds_.size() ? kinds_[i] : PieceKind::kNormal;
    if (k == PieceKind::kControl) return {};
    if (k == PieceKind::kUnknown) return unk_surface_;
    const int b = ByteFallbackValue(token);
    if (k == PieceKind::kByte && b >= 0) return std::string(1, static_cast<char>(b));
    return ReplaceAll(token, kMetaSymbol, " ");
  }
  std::string t(token);
  for (const Step& s : steps_) {
    if (s.kind == Step::Kind::kReplace) t = ReplaceAll(t, s.from, s.to);
    if (s.kind == Step::Kind::kMetaspace) t = ReplaceAll(t, s.from, " ");
    if (s.kind == Step::Kind::kByteFallback && ByteFallbackValue(t) >= 0) {
      t = std::string(1, static_cast<char>(ByteFallbackValue(t)));
    }
  }
  return t;
}

void TokenDecoder::DecodeChain(std::span<const std::string_view> tokens, std::string* out) const {
  std::vector<std::string> cur(tokens.begin(), tokens.end());
  for (const Step& s : steps_) {
    std::vector<std::string> next;
    next.reserve(cur.size());
    switch (s.kind) {
      case Step::Kind::kReplace:
        for (const std::string& t : cur) next.push_back(ReplaceAll(t, s.from, s.to));
        break;
      case Step::Kind::kByteFallback: {
        std::string bytes;
        size_t count = 0;
        for (std::string& t : cur) {
          const int b = ByteFallbackValue(t);
          if (b >= 0) {
            bytes.push_back(static_cast<char>(b));
            ++count;
            continue;
          }
          FlushBytes(&bytes, count, &next);
          count = 0;
          next.push_back(std::move(t));
        }
        FlushBytes(&bytes, count, &next);
        break;
      }
      case Step::Kind::kFuse: {
        std::string all;
        for (const std::string& t : cur) all += t;
        next.push_back(std::move(all));
        break;
      }
      case Step::Kind::kStrip:
        for (const std::string& t : cur) {
          std::vector<size_t> starts;  // character starts
          for (size_t i = 0; i < t.size(); i += CharLen(t, i)) starts.push_back(i);
          size_t first = 0, last = starts.size();
          auto is = [&](size_t k) {
            const size_t end = k + 1 < starts.size() ? starts[k + 1] : t.size();
            return std::string_view(t).substr(starts[k], end - starts[k]) == s.from;
          };
          for (size_t k = 0; k < s.start && k < starts.size() && is(k); ++k) first = k + 1;
          for (size_t k = 0; k < s.stop && k < starts.size(); ++k) {
            const size_t idx = starts.size() - k - 1;
            if (!is(idx)) break;
            last = idx;
          }
          if (first >= last) {
            next.emplace_back();
          } else {
            const size_t b = starts[first], e = last < starts.size() ? starts[last] : t.size();
            next.push_back(t.substr(b, e - b));
          }
        }
        break;
      case Step::Kind::kMetaspace:
        for (size_t i = 0; i < cur.size(); ++i) {
          next.push_back(ReplaceAll(cur[i], s.from, i == 0 && s.strip_first ? "" : " "));
        }
        break;
    }
    cur = std::move(next);
  }
  for (const std::string& t : cur) out->append(t);
}

void TokenDecoder::DecodeSentencePiece(std::span<const std::string_view> tokens,
                                       std::span<const int32_t> ids, std::string* out) const {
  const size_t base = out->size();
  bool is_bos_ws = true, bos_ws_seen = false;
  std::string bytes;
  auto flush = [&] {  // ProcessBytePieces: a character at a time, U+FFFD per invalid byte
    size_t i = 0;
    while (i < bytes.size()) {
      const size_t bad = FindInvalidUtf8(std::string_view(bytes).substr(i));
      if (bad == std::string_view::npos) {
        out->append(bytes, i);
        break;
      }
      out->append(bytes, i, bad);
      out->append(kReplacementChar);
      i += bad + 1;
    }
    bytes.clear();
  };
  for (size_t i = 0; i < tokens.size(); ++i) {
    const size_t id = static_cast<size_t>(ids[i]);
    const PieceKind k = id < kinds_.size() ? kinds_[id] : PieceKind::kNormal;
    if (k == PieceKind::kByte) {
      const int b = ByteFallbackValue(tokens[i]);
      bytes.push_back(static_cast<char>(b < 0 ? 0 : b));
      continue;
    }
    flush();
    if (bos_ws_seen || out->size() > base) is_bos_ws = false;
    bos_ws_seen = false;
    if (k == PieceKind::kControl) continue;
    if (k == PieceKind::kUnknown) {
      out->append(unk_surface_);
      continue;
    }
    std::string_view piece = tokens[i];
    if (is_bos_ws && (strip_dummy_prefix_ || remove_extra_whitespaces_) &&
        piece.starts_with(kMetaSymbol)) {
      piece.remove_prefix(kMetaSymbol.size());
      bos_ws_seen = !remove_extra_whitespaces_;
    }
    ReplaceAll(piece, kMetaSymbol, " ", out);
  }
  flush();
}

}  // namespace stoker
