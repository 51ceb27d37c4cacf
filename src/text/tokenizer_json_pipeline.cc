#include "text/tokenizer_json_pipeline.h"

#include <algorithm>

#include "text/base64.h"
#include "text/sp_text.h"
#include "text/tokenizer_json_vocab.h"
#include "text/utf8.h"

namespace stoker {
namespace {

using Json = nlohmann::json;

std::string TypeOf(const Json& j) { return j.is_object() ? j.value("type", std::string()) : ""; }

// PCRE2 source for a literal string.
std::string EscapeLiteral(std::string_view s) {
  std::string out;
  for (char ch : s) {
    if (std::string_view("\\^$.|?*+()[]{}-/").find(ch) != std::string_view::npos) out += '\\';
    out += ch;
  }
  return out;
}

Status AddSplit(std::string_view pattern, std::string_view origin, const std::string& field,
                BpeTokenizer::Config* c,
                RegexSplitter::Behavior behavior = RegexSplitter::Behavior::kIsolated,
                bool invert = false) {
  Result<std::unique_ptr<RegexSplitter>> split =
      RegexSplitter::Compile(pattern, RegexSplitter::Dialect::kOniguruma,
                             std::string(origin) + ": " + field, true, behavior, invert);
  if (!split.ok()) return split.status();
  c->stages.push_back({std::move(split).value()});
  return Status::OK();
}

// Whether a String split on `literal` (one UTF-8 character) can never match the text that reaches
// it: a Replace normalizer turned every `literal` into text without it, and no later edit or
// earlier stage brings one back. Such a split (transformers 5's GemmaTokenizer writes
// Split(" ", MergedWithPrevious) after Replace(" ", "▁")) leaves every piece whole under any
// behavior without invert; skipping it lets the "▁" cut of ParsePreTokenizer apply. Kept, the
// whole segment was one word: merged without the cache, 6x slower on prose and code.
bool SplitNeverMatches(std::string_view literal, const BpeTokenizer::Config& c) {
  if (literal.empty() || literal.size() != Utf8SequenceLength(static_cast<uint8_t>(literal[0]))) {
    return false;  // longer literals could form where two replacements meet
  }
  auto has = [&](std::string_view s) { return s.find(literal) != std::string_view::npos; };
  bool gone = false;  // no `literal` in the text after the edits so far
  for (const TextEdit& e : c.edits) {
    switch (e.kind) {
      case TextEdit::Kind::kReplace:
        gone = (gone || e.from == literal) && !has(e.to);
        break;
      case TextEdit::Kind::kPrepend:
        gone = gone && !has(e.to);
        break;
      default:  // a charsmap (or an edit added later) may write any character
        gone = false;
        break;
    }
  }
  for (const BpeTokenizer::Stage& s : c.stages) {
    if (s.metaspace && has(s.metaspace->replacement)) gone = false;
  }
  return gone;
}

// Walks a pre_tokenizer tree; *byte_level is set once the ByteLevel step was seen (it must be
// the last step: the ones before it see text, and it maps the result to bytes).
Status WalkPreTokenizer(const Json& j, const JsonFields& f, const std::string& field,
                        BpeTokenizer::Config* c, bool* byte_level) {
  std::string type = TypeOf(j);
  if (*byte_level) {
    return f.Fail(field, "a step after ByteLevel is not supported (ByteLevel must be last)");
  }
  if (type == "Sequence") {
    if (!j.contains("pretokenizers") || !j["pretokenizers"].is_array()) {
      return f.Fail(field + ".pretokenizers", "must be an array");
    }
    for (size_t i = 0; i < j["pretokenizers"].size(); ++i) {
      STOKER_RETURN_IF_ERROR(WalkPreTokenizer(j["pretokenizers"][i], f,
                                              field + ".pretokenizers[" + std::to_string(i) + "]",
                                              c, byte_level));
    }
    return Status::OK();
  }
  if (type == "Split") {
    using B = RegexSplitter::Behavior;
    static const std::pair<const char*, B> kBehaviors[] = {
        {"Isolated", B::kIsolated},
        {"Removed", B::kRemoved},
        {"MergedWithPrevious", B::kMergedWithPrevious},
        {"MergedWithNext", B::kMergedWithNext},
        {"Contiguous", B::kContiguous}};
    const Json& jb = j.contains("behavior") ? j["behavior"] : Json();
    std::string behavior = jb.is_string() ? jb.get<std::string>() : "";
    B b = B::kIsolated;
    bool known = false;
    for (const auto& [name, value] : kBehaviors) {
      if (behavior == name) b = value, known = true;
    }
    if (!known) {
      return f.Fail(field + ".behavior",
                    "'" + behavior +
                        "' is not supported (Isolated, Removed, MergedWithPrevious, "
                        "MergedWithNext or Contiguous)");
    }
    const Json& ji = j.contains("invert") ? j["invert"] : Json();
    if (!ji.is_null() && !ji.is_boolean()) {
      return f.Fail(field + ".invert", "must be true or false");
    }
    bool invert = ji.is_boolean() && ji.get<bool>();
    const Json& p = j.contains("pattern") ? j["pattern"] : Json();
    if (p.is_object() && p.contains("Regex") && p["Regex"].is_string()) {
      return AddSplit(p["Regex"].get<std::string>(), f.origin, field + ".pattern.Regex", c, b,
                      invert);
    }
    if (p.is_object() && p.contains("String") && p["String"].is_string()) {
      if (!invert && SplitNeverMatches(p["String"].get<std::string>(), *c)) return Status::OK();
      return AddSplit(EscapeLiteral(p["String"].get<std::string>()), f.origin,
                      field + ".pattern.String", c, b, invert);
    }
    return f.Fail(field + ".pattern", "must be {\"Regex\": ...} or {\"String\": ...}");
  }
  if (type == "Metaspace") {
    MetaspaceStep m;
    const Json& r = j.contains("replacement") ? j["replacement"] : Json();
    if (!r.is_string() || r.get<std::string>().empty()) {
      return f.Fail(field + ".replacement", "must be a one-character string");
    }
    m.replacement = r.get<std::string>();
    // tokenizers' Metaspace deserializer: prepend_scheme defaults to "always"; the old
    // add_prefix_space: false means "never" and contradicts any other scheme.
    std::string scheme = "always";
    if (j.contains("prepend_scheme") && !j["prepend_scheme"].is_null()) {
      if (!j["prepend_scheme"].is_string()) {
        return f.Fail(field + ".prepend_scheme", "must be first, always or never");
      }
      scheme = j["prepend_scheme"].get<std::string>();
    }
    if (j.contains("add_prefix_space") && j["add_prefix_space"].is_boolean() &&
        !j["add_prefix_space"].get<bool>()) {
      if (scheme != "never") {
        return f.Fail(field + ".add_prefix_space",
                      "false does not match prepend_scheme '" + scheme + "'");
      }
    }
    if (scheme == "always") {
      m.prepend = MetaspaceStep::Prepend::kAlways;
    } else if (scheme == "first") {
      m.prepend = MetaspaceStep::Prepend::kFirst;
    } else if (scheme == "never") {
      m.prepend = MetaspaceStep::Prepend::kNever;
    } else {
      return f.Fail(field + ".prepend_scheme",
                    "'" + scheme + "' is not supported (first, always or never)");
    }
    m.split = j.contains("split") && j["split"].is_boolean() ? j["split"].get<bool>() : true;
    const std::string marker = m.replacement;
    const bool split = m.split;
    c->stages.push_back({nullptr, std::move(m), "", false});
    if (split) c->stages.push_back({nullptr, std::nullopt, marker, true});
    return Status::OK();
  }
  if (type == "WhitespaceSplit") {  // cut at runs of char::is_whitespace (White_Space), removed
    return AddSplit(
        "[\\t\\n\\x{0B}\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
        "\\x{202F}\\x{205F}\\x{3000}]+",
        f.origin, field, c, RegexSplitter::Behavior::kRemoved);
  }
  if (type == "ByteLevel") {
    *byte_level = true;
    if (j.value("add_prefix_space", false)) c->stages.push_back({nullptr});
    if (j.value("use_regex", true)) {
      return AddSplit(kGpt2Pattern, f.origin, field + " (ByteLevel's GPT-2 regex)", c);
    }
    return Status::OK();
  }
  return f.Fail(field + ".type",
                "'" + type +
                    "' is not supported (ByteLevel, Metaspace, or a Sequence of Split steps and "
                    "one of them)");
}

// Appends the ids of one template piece (a SpecialToken) to *out.
Status TemplateIds(const Json& piece, const Json& specials, const JsonFields& f,
                   const std::string& field, std::vector<int32_t>* out) {
  const Json& st = piece["SpecialToken"];
  std::string name = st.value("id", std::string());
  if (!specials.is_object() || !specials.contains(name) || !specials[name].contains("ids")) {
    return f.Fail(field, "special token '" + name + "' is not in special_tokens");
  }
  for (const Json& id : specials[name]["ids"]) {
    if (!id.is_number_unsigned() || id.get<uint64_t>() >= static_cast<uint64_t>(INT32_MAX)) {
      return f.Fail(field, "the ids of '" + name + "' must be int32");
    }
    out->push_back(id.get<int32_t>());
  }
  return Status::OK();
}

Status WalkPostProcessor(const Json& j, const JsonFields& f, const std::string& field,
                         BpeTokenizer::Config* c) {
  if (j.is_null()) return Status::OK();
  std::string type = TypeOf(j);
  if (type == "ByteLevel") return Status::OK();  // offsets only
  if (type == "Sequence") {
    const Json& list = j.contains("processors") ? j["processors"] : Json();
    for (size_t i = 0; i < list.size(); ++i) {
      STOKER_RETURN_IF_ERROR(
          WalkPostProcessor(list[i], f, field + ".processors[" + std::to_string(i) + "]", c));
    }
    return Status::OK();
  }
  if (type == "TemplateProcessing") {
    if (!j.contains("single") || !j["single"].is_array()) {
      return f.Fail(field + ".single", "must be an array");
    }
    bool after = false;
    for (size_t i = 0; i < j["single"].size(); ++i) {
      const Json& piece = j["single"][i];
      std::string at = field + ".single[" + std::to_string(i) + "]";
      if (piece.contains("Sequence")) {
        after = true;
      } else if (piece.contains("SpecialToken")) {
        STOKER_RETURN_IF_ERROR(TemplateIds(piece, j.value("special_tokens", Json()), f, at,
                                           after ? &c->suffix_ids : &c->prefix_ids));
      } else {
        return f.Fail(at, "must be a Sequence or a SpecialToken");
      }
    }
    return Status::OK();
  }
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    for (const char* key : {"cls", "sep"}) {
      const Json& p = j.contains(key) ? j[key] : Json();
      if (!p.is_array() || p.size() != 2 || !p[1].is_number_unsigned()) {
        return f.Fail(field + "." + key, "must be [TOKEN, ID]");
      }
    }
    c->prefix_ids.push_back(j["cls"][1].get<int32_t>());
    c->suffix_ids.insert(c->suffix_ids.begin(), j["sep"][1].get<int32_t>());
    return Status::OK();
  }
  return f.Fail(field + ".type",
                "'" + type + "' is not supported (use --no-post-processor to ignore it)");
}

}  // namespace

Status ParseNormalizer(const Json& j, std::string_view origin, BpeTokenizer::Config* c) {
  const JsonFields f{origin};
  if (j.is_null()) return Status::OK();
  std::string type = TypeOf(j);
  if (type == "NFC") {
    // NFC runs first in stoker's pipeline; Strip commutes with it (NFC keeps whitespace
    // whitespace).
    if (!std::all_of(c->edits.begin(), c->edits.end(),
                     [](const TextEdit& e) { return e.kind == TextEdit::Kind::kStrip; })) {
      return f.Fail("normalizer", "NFC after Prepend or Replace is not supported");
    }
    c->nfc = true;
    return Status::OK();
  }
  if (type == "Precompiled") {
    const Json& m = j.contains("precompiled_charsmap") ? j["precompiled_charsmap"] : Json();
    std::string blob;
    if (!m.is_string() || !DecodeBase64(m.get<std::string>(), &blob)) {
      return f.Fail("normalizer.precompiled_charsmap", "must be a base64 string");
    }
    STOKER_ASSIGN_OR_RETURN(PrecompiledCharsmap map,
                            PrecompiledCharsmap::Parse(blob, std::string(origin) + ": normalizer"));
    TextEdit e;
    e.kind = TextEdit::Kind::kPrecompiled;
    e.charsmap = std::make_shared<const PrecompiledCharsmap>(std::move(map));
    c->edits.push_back(std::move(e));
    return Status::OK();
  }
  if (type == "Prepend" && j.contains("prepend") && j["prepend"].is_string()) {
    c->edits.push_back({TextEdit::Kind::kPrepend, "", j["prepend"].get<std::string>()});
    return Status::OK();
  }
  if (type == "Replace" && j.contains("content") && j["content"].is_string()) {
    const Json& p = j.contains("pattern") ? j["pattern"] : Json();
    if (p.is_object() && p.contains("String") && p["String"].is_string()) {
      c->edits.push_back({TextEdit::Kind::kReplace, p["String"].get<std::string>(),
                          j["content"].get<std::string>()});
      return Status::OK();
    }
    if (p.is_object() && p.contains("Regex") && p["Regex"].is_string() &&
        p["Regex"].get<std::string>() == " {2,}") {
      // transformers' SentencePiece converters (T5, Pegasus, ALBERT, XLNet): runs of spaces.
      TextEdit e;
      e.kind = TextEdit::Kind::kSpaceRuns;
      e.to = j["content"].get<std::string>();
      c->edits.push_back(std::move(e));
      return Status::OK();
    }
    return f.Fail("normalizer.pattern",
                  "only a String pattern or the Regex \" {2,}\" is supported in Replace");
  }
  if (type == "Strip") {
    TextEdit e;
    e.kind = TextEdit::Kind::kStrip;
    for (const char* key : {"strip_left", "strip_right"}) {
      if (!j.contains(key) || !j[key].is_boolean()) {
        return f.Fail(std::string("normalizer.") + key, "must be true or false");
      }
    }
    e.strip_left = j["strip_left"].get<bool>();
    e.strip_right = j["strip_right"].get<bool>();
    c->edits.push_back(std::move(e));
    return Status::OK();
  }
  if (type == "Sequence" && j.contains("normalizers") && j["normalizers"].is_array()) {
    for (size_t i = 0; i < j["normalizers"].size(); ++i) {
      Status st = ParseNormalizer(j["normalizers"][i], origin, c);
      const std::string inner = TypeOf(j["normalizers"][i]);
      if (!st.ok() && (inner == "NFC" || inner == "Strip" || inner == "Replace")) return st;
      if (!st.ok()) {
        return f.Fail("normalizer.normalizers[" + std::to_string(i) + "]",
                      "'" + TypeOf(j["normalizers"][i]) +
                          "' is not supported (NFC, Precompiled, Prepend, Strip, Replace "
                          "with a String pattern or the Regex \" {2,}\")");
      }
    }
    return Status::OK();
  }
  return f.Fail("normalizer.type",
                "'" + type +
                    "' is not supported (null, NFC, Precompiled, Prepend, Strip, Replace with a "
                    "String pattern or the Regex \" {2,}\", or a Sequence of them)");
}

bool HasByteLevel(const Json& j) {
  if (TypeOf(j) == "ByteLevel") return true;
  if (TypeOf(j) == "Sequence" && j.contains("pretokenizers") && j["pretokenizers"].is_array()) {
    for (const Json& p : j["pretokenizers"]) {
      if (HasByteLevel(p)) return true;
    }
  }
  return false;
}

Status ParsePreTokenizer(const Json& j, std::string_view origin, bool sp_style,
                         BpeTokenizer::Config* c) {
  bool byte_level = false;
  if (!j.is_null()) {
    STOKER_RETURN_IF_ERROR(WalkPreTokenizer(j, {origin}, "pre_tokenizer", c, &byte_level));
  }
  if (!sp_style) return Status::OK();
  // Without a split of its own, the whole segment is one word: cut it before each "▁" that
  // follows another character when that provably gives the same ids.
  bool splits = false;
  for (const BpeTokenizer::Stage& s : c->stages) splits = splits || s.split || s.every;
  if (!splits && !c->whole_piece_first && c->model.MarkerCutIsExact(kMetaSymbol)) {
    c->stages.push_back({nullptr, std::nullopt, std::string(kMetaSymbol), false});
  }
  return Status::OK();
}

namespace {

Status DecoderSteps(const Json& j, const std::string& field,
                    std::vector<TokenDecoder::Step>* steps) {
  using K = TokenDecoder::Step::Kind;
  const std::string type = TypeOf(j);
  TokenDecoder::Step s;
  if (type == "Sequence" && j.contains("decoders") && j["decoders"].is_array()) {
    for (size_t i = 0; i < j["decoders"].size(); ++i) {
      STOKER_RETURN_IF_ERROR(
          DecoderSteps(j["decoders"][i], field + ".decoders[" + std::to_string(i) + "]", steps));
    }
    return Status::OK();
  }
  if (type == "ByteFallback" || type == "Fuse") {
    s.kind = type == "Fuse" ? K::kFuse : K::kByteFallback;
  } else if (type == "Replace" && j.contains("content") && j["content"].is_string() &&
             j.contains("pattern") && j["pattern"].is_object() && j["pattern"].contains("String") &&
             j["pattern"]["String"].is_string()) {
    s.kind = K::kReplace;
    s.from = j["pattern"]["String"].get<std::string>();
    s.to = j["content"].get<std::string>();
  } else if (type == "Strip" && j.contains("content") && j["content"].is_string()) {
    s.kind = K::kStrip;
    s.from = j["content"].get<std::string>();
    s.start = j.value("start", size_t{0});
    s.stop = j.value("stop", size_t{0});
  } else if (type == "Metaspace" && j.contains("replacement") && j["replacement"].is_string()) {
    s.kind = K::kMetaspace;
    s.from = j["replacement"].get<std::string>();
    std::string scheme = j.contains("prepend_scheme") && j["prepend_scheme"].is_string()
                             ? j["prepend_scheme"].get<std::string>()
                             : "always";
    if (j.contains("add_prefix_space") && j["add_prefix_space"].is_boolean() &&
        !j["add_prefix_space"].get<bool>()) {
      scheme = "never";
    }
    s.strip_first = scheme != "never";
  } else {
    return InvalidArgument(field + ".type: '" + type +
                           "' is not supported (Replace with a String pattern, ByteFallback, "
                           "Fuse, Strip, Metaspace, or a Sequence of them)");
  }
  steps->push_back(std::move(s));
  return Status::OK();
}

}  // namespace

void ParseDecoder(const Json& j, std::string_view origin, BpeTokenizer::Config* c) {
  if (j.is_null()) {
    c->decode_error = std::string(origin) + ": decoder is null; stoker cannot decode this file";
    return;
  }
  std::vector<TokenDecoder::Step> steps;
  Status st = DecoderSteps(j, "decoder", &steps);
  if (!st.ok()) {
    c->decode_error = std::string(origin) + ": " + std::string(st.message());
    return;
  }
  c->decoder = TokenDecoder::Chain(std::move(steps));
}

Status ParsePostProcessor(const Json& j, std::string_view origin, BpeTokenizer::Config* c) {
  return WalkPostProcessor(j, {origin}, "post_processor", c);
}

}  // namespace stoker
