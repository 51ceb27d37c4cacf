#include "text/tokenizer_json.h"

#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <span>
#include <unordered_map>

#include "common/file_util.h"
#include "common/hash.h"
#include "text/bpe_options.h"
#include "text/tokenizer_json_pipeline.h"
#include "text/tokenizer_json_scan.h"
#include "text/tokenizer_json_vocab.h"
#include "text/unigram_json.h"

namespace stoker {
namespace {

using Json = nlohmann::json;

struct AddedFlags {
  bool special;
  bool normalized;
};

Status ParseAddedTokens(const Json& j, const JsonFields& f, std::vector<AddedTokens::Token>* all,
                        std::vector<AddedFlags>* flags) {
  if (j.is_null()) return Status::OK();
  if (!j.is_array()) return f.Fail("added_tokens", "must be an array");
  for (size_t i = 0; i < j.size(); ++i) {
    const Json& t = j[i];
    std::string at = "added_tokens[" + std::to_string(i) + "]";
    if (!t.is_object() || !t.contains("id") || !t["id"].is_number_unsigned() ||
        !t.contains("content") || !t["content"].is_string()) {
      return f.Fail(at, "must be an object with an unsigned 'id' and a string 'content'");
    }
    if (t.contains("single_word") && t["single_word"].is_boolean() &&
        t["single_word"].get<bool>()) {
      return f.Fail(at + ".single_word", "true is not supported");
    }
    uint64_t id = t["id"].get<uint64_t>();
    if (id >= static_cast<uint64_t>(INT32_MAX)) {
      return f.Fail(at + ".id", "does not fit a 32-bit token id (the vocabulary is too big)");
    }
    all->push_back({t["content"].get<std::string>(), static_cast<int32_t>(id),
                    t.value("lstrip", false), t.value("rstrip", false)});
    bool special = t.value("special", false);
    flags->push_back({special, t.value("normalized", !special)});
  }
  return Status::OK();
}

// The "a b" / ["a", "b"] halves of merge i (views into m).
Status MergeHalves(const Json& m, size_t i, const JsonFields& f, JsonVocab::MergeText* halves) {
  if (m.is_string()) {
    const std::string& s = m.get_ref<const std::string&>();
    size_t sp = s.find(' ');
    if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos) {
      return f.Fail("model.merges[" + std::to_string(i) + "]",
                    "'" + s + "' is not two tokens separated by one space");
    }
    *halves = {std::string_view(s).substr(0, sp), std::string_view(s).substr(sp + 1)};
    return Status::OK();
  }
  if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
    *halves = {m[0].get_ref<const std::string&>(), m[1].get_ref<const std::string&>()};
    return Status::OK();
  }
  return f.Fail("model.merges[" + std::to_string(i) + "]", "must be \"A B\" or [\"A\", \"B\"]");
}

// `scanned`: the merges TokenizerJsonScan read (and *vocab holds its vocab), whose places in
// `model` are empty; null: read both from `model`.
// `sp_style`: the pipeline has no ByteLevel step, so the vocabulary holds text ("▁the") and the
// model starts from characters (tokenizers' BPE::merge_word), with byte_fallback allowed.
Status ParseModel(const Json& model, const JsonFields& f, BpeTokenizer::Config* c,
                  uint64_t* model_size, JsonVocab* vocab,
                  const std::vector<JsonVocab::MergeText>* scanned, bool sp_style) {
  if (!model.is_object()) return f.Fail("model", "must be an object");
  std::string type = model.value("type", std::string("BPE"));
  if (type == "Unigram") return ParseUnigramModel(model, f, c, model_size, vocab);
  if (type != "BPE") {
    return f.Fail("model.type", "'" + type + "' is not supported (BPE or Unigram)");
  }
  if (model.contains("dropout") && !model["dropout"].is_null() &&
      !(model["dropout"].is_number() && model["dropout"].get<double>() == 0.0)) {
    return f.Fail("model.dropout", "BPE dropout is not supported (it is random)");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (model.contains(key) && !model[key].is_null() &&
        !(model[key].is_string() && model[key].get<std::string>().empty())) {
      return f.Fail(std::string("model.") + key, "is not supported with byte-level BPE");
    }
  }
  const bool byte_fallback = model.value("byte_fallback", false);
  if (byte_fallback && !sp_style) {
    return f.Fail("model.byte_fallback",
                  "true is not supported with byte-level BPE (a ByteLevel pre_tokenizer)");
  }
  if (!model.contains("vocab") || !model["vocab"].is_object()) {
    return f.Fail("model.vocab", "must be an object of token -> id");
  }
  if (!model.contains("merges") || !model["merges"].is_array()) {
    return f.Fail("model.merges", "must be an array");
  }
  if (scanned != nullptr) {
    if (sp_style) vocab->UseRawKeys();
    STOKER_RETURN_IF_ERROR(vocab->AddMerges(*scanned, 0));
  } else {
    for (const auto& [text, v] : model["vocab"].items()) {  // in key order (a std::map)
      STOKER_RETURN_IF_ERROR(
          vocab->Add(text, v.is_number_unsigned() ? v.get<uint64_t>() : UINT64_MAX));
    }
    if (sp_style) vocab->UseRawKeys();
    // The merges before the first malformed one are checked first: the error names the first
    // merge that is wrong in any way.
    const Json& jm = model["merges"];
    std::vector<JsonVocab::MergeText> halves(jm.size());
    Status malformed;
    size_t n = 0;
    while (n < jm.size() && (malformed = MergeHalves(jm[n], n, f, &halves[n])).ok()) ++n;
    STOKER_RETURN_IF_ERROR(vocab->AddMerges(std::span(halves).first(n), 0));
    STOKER_RETURN_IF_ERROR(malformed);
  }
  *model_size = vocab->model_size();
  STOKER_ASSIGN_OR_RETURN(c->model, vocab->Build());
  c->whole_piece_first = model.value("ignore_merges", false);
  if (model.contains("unk_token") && model["unk_token"].is_string()) {
    int32_t u = vocab->index().Find(model["unk_token"].get<std::string>());
    if (u >= 0) c->model.set_unk(u, model.value("fuse_unk", false));
  }
  if (sp_style) {
    std::vector<int32_t> fallback;
    if (byte_fallback) {  // tokenizers: format!("<{:#04X}>", byte)
      fallback.resize(256);
      for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof(name), "<0x%02X>", b);
        fallback[static_cast<size_t>(b)] = vocab->index().Find(name);
      }
    }
    c->model.set_char_symbols(std::move(fallback));
  }
  return Status::OK();
}

// tokenizers ignores the ids written in added_tokens when it loads a file: a token whose text is
// in the vocabulary takes that id, any other the next one after the vocabulary (counted as its
// number of entries) and the added tokens so far. Do the same, or the ids would differ.
void AssignAddedIds(const VocabIndex& vocab, std::vector<AddedTokens::Token>* added) {
  const int64_t count = static_cast<int64_t>(vocab.size());
  std::unordered_map<std::string, int32_t> assigned;
  int64_t max_id = -1;
  for (AddedTokens::Token& t : *added) {
    if (int32_t v = vocab.Find(t.content); v >= 0) {
      t.id = v;
    } else if (auto a = assigned.find(t.content); a != assigned.end()) {
      t.id = a->second;
    } else if (max_id < 0) {
      t.id = static_cast<int32_t>(count);
    } else {
      t.id = static_cast<int32_t>(max_id >= count || count == 0 ? max_id + 1 : count);
    }
    assigned[t.content] = t.id;
    max_id = std::max<int64_t>(max_id, t.id);
  }
}

}  // namespace

char32_t ByteLevelChar(uint8_t b) {
  if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174) return b;
  // The other bytes (0-32, 127-160, 173) take 256, 257, ... in byte order.
  int n = 0;
  for (int x = 0; x < b; ++x) {
    if (!((x >= 33 && x <= 126) || (x >= 161 && x <= 172) || x >= 174)) ++n;
  }
  return static_cast<char32_t>(256 + n);
}

namespace {

// `scan`: what TokenizerJsonScan read (j is its skeleton), or null (j is the whole document).
Result<std::unique_ptr<BpeTokenizer>> FromJson(const Json& j, std::string_view json,
                                               std::string_view origin,
                                               const TokenizerOptions& options,
                                               TokenizerJsonScan* scan) {
  const JsonFields f{origin};
  if (!j.is_object()) return f.Fail("top level", "must be an object");
  if (j.contains("truncation") && !j["truncation"].is_null()) {
    return f.Fail("truncation", "is set; stoker tokenizes whole documents (set it to null)");
  }
  if (!j.contains("model") && j.contains("config") && j.contains("vocab")) {
    return f.Fail("top level",
                  "is a Mistral Tekken file ('config' and 'vocab', no 'model'), which stoker does "
                  "not read; convert it with transformers: convert_tekken_tokenizer(path)"
                  ".save_pretrained(DIR, save_format=\"hf\") (transformers.integrations.mistral."
                  "tokenizer), then use DIR/tokenizer.json");
  }
  BpeTokenizer::Config c;
  uint64_t model_size = 0;
  JsonVocab dom_vocab(origin);
  JsonVocab& vocab = scan != nullptr ? scan->vocab() : dom_vocab;
  static const Json kNoModel;  // a reference either way: `j["model"] : Json()` would copy it
  const Json& model = j.contains("model") ? j["model"] : kNoModel;
  const Json pre_tokenizer = j.value("pre_tokenizer", Json());
  const bool sp_style = !HasByteLevel(pre_tokenizer);
  STOKER_RETURN_IF_ERROR(ParseModel(model, f, &c, &model_size, &vocab,
                                    scan != nullptr ? &scan->merges() : nullptr, sp_style));
  STOKER_RETURN_IF_ERROR(ParseNormalizer(j.value("normalizer", Json()), f.origin, &c));
  STOKER_RETURN_IF_ERROR(ParsePreTokenizer(pre_tokenizer, f.origin, sp_style, &c));
  if (sp_style) ParseDecoder(j.value("decoder", Json()), f.origin, &c);
  if (options.dummy_prefix_at_start_only) BpeTokenizer::UseDummyPrefixAtStartOnly(&c);

  std::vector<AddedTokens::Token> added;
  std::vector<AddedFlags> flags;
  STOKER_RETURN_IF_ERROR(ParseAddedTokens(j.value("added_tokens", Json()), f, &added, &flags));
  AssignAddedIds(vocab.index(), &added);
  uint64_t vocab_size = model_size;
  std::vector<AddedTokens::Token> raw, normalized;
  for (size_t i = 0; i < added.size(); ++i) {
    vocab_size = std::max<uint64_t>(vocab_size, static_cast<uint64_t>(added[i].id) + 1);
    if (c.added_content.size() <= static_cast<size_t>(added[i].id)) {
      c.added_content.resize(added[i].id + 1);
    }
    c.added_content[added[i].id] = added[i].content;
    c.added_strips.resize(c.added_content.size());
    c.added_strips[added[i].id] =
        (added[i].lstrip ? BpeTokenizer::kLstrip : 0) |
        (added[i].rstrip ? BpeTokenizer::kRstrip : 0) |
        (!flags[i].special && added[i].id >= 0 && uint64_t(added[i].id) < model_size
             ? BpeTokenizer::kModelPiece
             : 0);
    if ((flags[i].special && !options.allow_special) || !options.match_added_tokens) continue;
    (flags[i].normalized ? normalized : raw).push_back(added[i]);
  }
  c.added = AddedTokens(std::move(raw));
  c.added_normalized = AddedTokens(std::move(normalized));
  c.vocab_size = vocab_size;
  if (options.post_processor) {
    STOKER_RETURN_IF_ERROR(ParsePostProcessor(j.value("post_processor", Json()), f.origin, &c));
  }
  Result<int32_t> eos = ResolveEos(options.eos, added, vocab_size, origin);
  if (!eos.ok() && !options.eos.empty()) {  // --eos may name a vocabulary token too
    std::string raw = options.eos;
    if ((sp_style || ByteLevelDecoder().Decode(options.eos, &raw)) && c.model.Find(raw) >= 0) {
      eos = c.model.Find(raw);
    }
  }
  if (!eos.ok()) return eos.status();
  c.eos_id = *eos;
  c.identity.kind = "tokenizer.json";
  c.identity.name = std::string(BaseName(origin)) + TokenizerJsonNameOptions(options);
  c.identity.checksum = Xxh3Hex(Xxh3(json.data(), json.size()));
  return std::make_unique<BpeTokenizer>(std::move(c));
}

}  // namespace

std::string TokenizerJsonNameOptions(const TokenizerOptions& options) {
  return std::string(options.allow_special ? " allow-special" : "") +
         (options.match_added_tokens ? "" : " no-added-tokens") +
         (options.post_processor ? "" : " no-post-processor") +
         (options.dummy_prefix_at_start_only ? " dummy-prefix-at-start-only" : "");
}

Result<std::unique_ptr<BpeTokenizer>> ParseTokenizerJsonWithDom(std::string_view json,
                                                                std::string_view origin,
                                                                const TokenizerOptions& options) {
  try {
    Json j = Json::parse(json.begin(), json.end());
    return FromJson(j, json, origin, options, nullptr);
  } catch (const Json::parse_error& e) {
    return InvalidArgument(std::string(origin) + ": not valid JSON at byte " +
                           std::to_string(e.byte) + ": " + e.what());
  } catch (const Json::exception& e) {
    return InvalidArgument(std::string(origin) + ": unexpected JSON value: " + e.what());
  }
}

namespace {

// `readable_past_end`: see TokenizerJsonScan::Scan.
Result<std::unique_ptr<BpeTokenizer>> ParseJsonText(std::string_view json, size_t readable_past_end,
                                                    std::string_view origin,
                                                    const TokenizerOptions& options) {
  std::unique_ptr<TokenizerJsonScan> scan =
      TokenizerJsonScan::Scan(json, origin, readable_past_end);
  if (scan == nullptr) return ParseTokenizerJsonWithDom(json, origin, options);
  try {
    return FromJson(scan->skeleton(), json, origin, options, scan.get());
  } catch (const Json::exception& e) {
    return InvalidArgument(std::string(origin) + ": unexpected JSON value: " + e.what());
  }
}

}  // namespace

Result<std::unique_ptr<BpeTokenizer>> ParseTokenizerJson(std::string_view json,
                                                         std::string_view origin,
                                                         const TokenizerOptions& options) {
  return ParseJsonText(json, 0, origin, options);
}

Result<std::unique_ptr<BpeTokenizer>> OpenTokenizerJson(const std::string& path,
                                                        const TokenizerOptions& options) {
  Result<std::string> bytes = ReadFileToString(path, TokenizerJsonScan::kPadding);
  if (!bytes.ok()) return bytes.status().WithContext("tokenizer.json");
  return ParseJsonText(*bytes, bytes->capacity() - bytes->size(), path, options);
}

}  // namespace stoker
