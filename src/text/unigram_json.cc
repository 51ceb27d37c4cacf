#include "text/unigram_json.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace stoker {
namespace {

// The f64 that `tokenizers` holds for a JSON score. Its JSON reader (serde_json without the
// `float_roundtrip` feature) does not round decimal text correctly: it reads the digits into a
// u64 (ignoring those that would overflow it), converts that to f64 and multiplies or divides it
// by one correctly rounded power of ten, two roundings where strtod has one. On T5's published
// tokenizer.json 8,334 of the 32,100 scores come out one ulp off, and that decides which of
// equally scored segmentations `tokenizers` picks ("-" * 31: "---","---","-",... and not
// "-","---",...). nlohmann::json has read `v` correctly rounded; its shortest decimal form is
// the text that tokenizers and Python's json write, and serde_json's arithmetic is redone on it.
double UnigramJsonScoreAsTokenizersReads(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  static const std::array<double, 309> kPow10 = [] {
    std::array<double, 309> p{};
    for (int i = 0; i < 309; ++i) {
      char text[8];
      std::snprintf(text, sizeof(text), "1e%d", i);
      p[static_cast<size_t>(i)] = std::strtod(text, nullptr);  // correctly rounded, as Rust's
    }
    return p;
  }();
  char buf[40];
  const auto r =
      std::to_chars(buf, buf + sizeof(buf) - 1, std::fabs(v), std::chars_format::scientific);
  *r.ptr = '\0';             // for atoi below
  uint64_t significand = 0;  // at most 17 digits: no overflow
  int exponent = 0;
  const char* p = buf;
  for (bool fraction = false; p < r.ptr && *p != 'e'; ++p) {
    if (*p == '.') {
      fraction = true;
      continue;
    }
    significand = significand * 10 + static_cast<uint64_t>(*p - '0');
    exponent -= fraction ? 1 : 0;
  }
  if (p < r.ptr) exponent += std::atoi(p + 1);
  double f = static_cast<double>(significand);
  while (true) {  // serde_json's f64_from_parts
    const int magnitude = exponent < 0 ? -exponent : exponent;
    if (magnitude < 309) {
      f = exponent >= 0 ? f * kPow10[static_cast<size_t>(magnitude)]
                        : f / kPow10[static_cast<size_t>(magnitude)];
      break;
    }
    if (f == 0 || exponent >= 0) break;  // out of range: as read
    f /= 1e308;
    exponent += 308;
  }
  return v < 0 ? -f : f;
}

}  // namespace

void UnigramWords::EncodeWord(std::string_view word, std::vector<int32_t>* ids) const {
  thread_local std::vector<UnigramModel::Span> spans;
  model_.Encode(word, &spans);
  // A run of unknown spans is one string (fuse_unk), looked up as a whole.
  auto emit_unknown = [&](std::string_view s) {
    const int32_t id = model_.Find(s);
    if (id >= 0) {
      ids->push_back(id);
      return;
    }
    if (!byte_ids_.empty()) {
      bool all = true;
      for (char b : s) all = all && byte_ids_[static_cast<uint8_t>(b)] >= 0;
      if (all) {
        for (char b : s) ids->push_back(byte_ids_[static_cast<uint8_t>(b)]);
        return;
      }
    }
    ids->push_back(unk_id_);
  };
  size_t unk_begin = 0, unk_end = 0;  // the pending run of unknown spans
  for (const UnigramModel::Span& s : spans) {
    if (s.id == unk_id_) {
      if (unk_end != s.begin) unk_begin = s.begin;
      unk_end = s.end;
      continue;
    }
    if (unk_end > unk_begin) emit_unknown(word.substr(unk_begin, unk_end - unk_begin));
    unk_begin = unk_end = 0;
    ids->push_back(s.id);
  }
  if (unk_end > unk_begin) emit_unknown(word.substr(unk_begin, unk_end - unk_begin));
}

Status ParseUnigramModel(const nlohmann::json& model, const JsonFields& f, BpeTokenizer::Config* c,
                         uint64_t* model_size, JsonVocab* vocab) {
  const nlohmann::json& jv = model.contains("vocab") ? model["vocab"] : nlohmann::json();
  if (!jv.is_array() || jv.empty()) {
    return f.Fail("model.vocab", "must be a non-empty array of [piece, score] (a Unigram model)");
  }
  auto words = std::make_shared<UnigramWords>();
  const size_t n = jv.size();
  if (n >= static_cast<size_t>(INT32_MAX)) return f.Fail("model.vocab", "has too many pieces");
  words->pieces_.resize(n);
  std::vector<double> scores(n);
  double min_score = INFINITY;
  for (size_t i = 0; i < n; ++i) {
    const nlohmann::json& e = jv[i];
    if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number()) {
      return f.Fail("model.vocab[" + std::to_string(i) + "]", "must be [piece, score]");
    }
    words->pieces_[i] = e[0].get<std::string>();
    scores[i] = e[1].is_number_float() ? UnigramJsonScoreAsTokenizersReads(e[1].get<double>())
                                       : e[1].get<double>();
    min_score = std::min(min_score, scores[i]);
    STOKER_RETURN_IF_ERROR(vocab->Add(words->pieces_[i], i));
  }
  const nlohmann::json& ju = model.contains("unk_id") ? model["unk_id"] : nlohmann::json();
  if (!ju.is_number_unsigned() || ju.get<uint64_t>() >= n) {
    return f.Fail("model.unk_id", "must be the id of a piece (stoker needs an unknown piece)");
  }
  words->unk_id_ = static_cast<int32_t>(ju.get<uint64_t>());
  const nlohmann::json jb = model.value("byte_fallback", nlohmann::json(false));
  if (!jb.is_boolean()) return f.Fail("model.byte_fallback", "must be true or false");
  if (jb.get<bool>()) {  // tokenizers: format!("<0x{byte:02X}>")
    words->byte_ids_.resize(256);
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof(name), "<0x%02X>", b);
      words->byte_ids_[static_cast<size_t>(b)] = vocab->index().Find(name);
    }
  }
  std::vector<UnigramModel::Piece> pieces(n);
  for (size_t i = 0; i < n; ++i) pieces[i] = {words->pieces_[i], scores[i]};
  words->model_ =
      UnigramModel::Build(pieces, words->unk_id_, min_score, UnigramModel::Arithmetic::kTokenizers);
  vocab->UseRawKeys();
  *model_size = vocab->model_size();
  STOKER_ASSIGN_OR_RETURN(c->model, vocab->Build());
  c->unigram = std::move(words);
  return Status::OK();
}

}  // namespace stoker
