#include "text/tokenizer_json_pipeline.h"

namespace stoker {
namespace {

using Json = nlohmann::json;

Status Fail(std::string_view origin, const std::string& field, const std::string& message) {
  return InvalidArgument(std::string(origin) + ": " + field + ": " + message);
}

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

// Walks a pre_tokenizer tree; *byte_level is set once the ByteLevel step was seen (it must be
// the last step: the ones before it see text, and it maps the result to bytes).
Status WalkPreTokenizer(const Json& j, std::string_view origin, const std::string& field,
                        BpeTokenizer::Config* c, bool* byte_level) {
  std::string type = TypeOf(j);
  if (*byte_level) {
    return Fail(origin, field, "a step after ByteLevel is not supported (ByteLevel must be last)");
  }
  if (type == "Sequence") {
    if (!j.contains("pretokenizers") || !j["pretokenizers"].is_array()) {
      return Fail(origin, field + ".pretokenizers", "must be an array");
    }
    for (size_t i = 0; i < j["pretokenizers"].size(); ++i) {
      STOKER_RETURN_IF_ERROR(WalkPreTokenizer(j["pretokenizers"][i], origin,
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
      return Fail(origin, field + ".behavior",
                  "'" + behavior +
                      "' is not supported (Isolated, Removed, MergedWithPrevious, "
                      "MergedWithNext or Contiguous)");
    }
    const Json& ji = j.contains("invert") ? j["invert"] : Json();
    if (!ji.is_null() && !ji.is_boolean()) {
      return Fail(origin, field + ".invert", "must be true or false");
    }
    bool invert = ji.is_boolean() && ji.get<bool>();
    const Json& p = j.contains("pattern") ? j["pattern"] : Json();
    if (p.is_object() && p.contains("Regex") && p["Regex"].is_string()) {
      return AddSplit(p["Regex"].get<std::string>(), origin, field + ".pattern.Regex", c, b,
                      invert);
    }
    if (p.is_object() && p.contains("String") && p["String"].is_string()) {
      return AddSplit(EscapeLiteral(p["String"].get<std::string>()), origin,
                      field + ".pattern.String", c, b, invert);
    }
    return Fail(origin, field + ".pattern", "must be {\"Regex\": ...} or {\"String\": ...}");
  }
  if (type == "ByteLevel") {
    *byte_level = true;
    if (j.value("add_prefix_space", false)) c->stages.push_back({nullptr});
    if (j.value("use_regex", true)) {
      return AddSplit(kGpt2Pattern, origin, field + " (ByteLevel's GPT-2 regex)", c);
    }
    return Status::OK();
  }
  return Fail(origin, field + ".type",
              "'" + type +
                  "' is not supported (byte-level BPE: ByteLevel, or a Sequence of Split steps "
                  "ending in ByteLevel)");
}

// Appends the ids of one template piece (a SpecialToken) to *out.
Status TemplateIds(const Json& piece, const Json& specials, std::string_view origin,
                   const std::string& field, std::vector<int32_t>* out) {
  const Json& st = piece["SpecialToken"];
  std::string name = st.value("id", std::string());
  if (!specials.is_object() || !specials.contains(name) || !specials[name].contains("ids")) {
    return Fail(origin, field, "special token '" + name + "' is not in special_tokens");
  }
  for (const Json& id : specials[name]["ids"]) {
    if (!id.is_number_unsigned() || id.get<uint64_t>() >= static_cast<uint64_t>(INT32_MAX)) {
      return Fail(origin, field, "the ids of '" + name + "' must be int32");
    }
    out->push_back(id.get<int32_t>());
  }
  return Status::OK();
}

Status WalkPostProcessor(const Json& j, std::string_view origin, const std::string& field,
                         BpeTokenizer::Config* c) {
  if (j.is_null()) return Status::OK();
  std::string type = TypeOf(j);
  if (type == "ByteLevel") return Status::OK();  // offsets only
  if (type == "Sequence") {
    const Json& list = j.contains("processors") ? j["processors"] : Json();
    for (size_t i = 0; i < list.size(); ++i) {
      STOKER_RETURN_IF_ERROR(
          WalkPostProcessor(list[i], origin, field + ".processors[" + std::to_string(i) + "]", c));
    }
    return Status::OK();
  }
  if (type == "TemplateProcessing") {
    if (!j.contains("single") || !j["single"].is_array()) {
      return Fail(origin, field + ".single", "must be an array");
    }
    bool after = false;
    for (size_t i = 0; i < j["single"].size(); ++i) {
      const Json& piece = j["single"][i];
      std::string at = field + ".single[" + std::to_string(i) + "]";
      if (piece.contains("Sequence")) {
        after = true;
      } else if (piece.contains("SpecialToken")) {
        STOKER_RETURN_IF_ERROR(TemplateIds(piece, j.value("special_tokens", Json()), origin, at,
                                           after ? &c->suffix_ids : &c->prefix_ids));
      } else {
        return Fail(origin, at, "must be a Sequence or a SpecialToken");
      }
    }
    return Status::OK();
  }
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    for (const char* key : {"cls", "sep"}) {
      const Json& p = j.contains(key) ? j[key] : Json();
      if (!p.is_array() || p.size() != 2 || !p[1].is_number_unsigned()) {
        return Fail(origin, field + "." + key, "must be [TOKEN, ID]");
      }
    }
    c->prefix_ids.push_back(j["cls"][1].get<int32_t>());
    c->suffix_ids.insert(c->suffix_ids.begin(), j["sep"][1].get<int32_t>());
    return Status::OK();
  }
  return Fail(origin, field + ".type",
              "'" + type + "' is not supported (use --no-post-processor to ignore it)");
}

}  // namespace

Status ParseNormalizer(const Json& j, std::string_view origin, BpeTokenizer::Config* c) {
  if (j.is_null()) return Status::OK();
  std::string type = TypeOf(j);
  if (type == "NFC") {
    c->nfc = true;
    return Status::OK();
  }
  if (type == "Sequence" && j.contains("normalizers") && j["normalizers"].is_array()) {
    for (size_t i = 0; i < j["normalizers"].size(); ++i) {
      Status st = ParseNormalizer(j["normalizers"][i], origin, c);
      if (!st.ok()) {
        return Fail(origin, "normalizer.normalizers[" + std::to_string(i) + "]",
                    "only NFC is supported, not '" + TypeOf(j["normalizers"][i]) + "'");
      }
    }
    return Status::OK();
  }
  return Fail(origin, "normalizer.type",
              "'" + type + "' is not supported (null, NFC or a Sequence of NFC)");
}

Status ParsePreTokenizer(const Json& j, std::string_view origin, BpeTokenizer::Config* c) {
  bool byte_level = false;
  if (j.is_null()) {
    return Fail(origin, "pre_tokenizer", "is null; only byte-level BPE (ByteLevel) is supported");
  }
  STOKER_RETURN_IF_ERROR(WalkPreTokenizer(j, origin, "pre_tokenizer", c, &byte_level));
  if (!byte_level) {
    return Fail(origin, "pre_tokenizer", "has no ByteLevel step; only byte-level BPE is supported");
  }
  return Status::OK();
}

Status ParsePostProcessor(const Json& j, std::string_view origin, BpeTokenizer::Config* c) {
  return WalkPostProcessor(j, origin, "post_processor", c);
}

}  // namespace stoker
