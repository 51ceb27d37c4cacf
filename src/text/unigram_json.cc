#include "text/unigram_json.h"

#include <cmath>
#include <cstdio>

namespace stoker {

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
    scores[i] = e[1].get<double>();
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
