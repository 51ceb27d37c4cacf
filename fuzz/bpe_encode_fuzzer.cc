// libFuzzer target: byte-level BPE encode through the PCRE2 pre-tokenizers (tiktoken's cl100k and
// o200k patterns, and a tokenizer.json with GPT-2's ByteLevel regex, NFC and added tokens).
// Random bytes are refused cleanly unless valid UTF-8; valid text must round-trip through decode
// and give only ids inside the vocabulary. The input is also read as a string of code points
// (3 bytes each), so most runs see valid Unicode; on both, the hand-written cl100k scanner must
// split exactly as PCRE2 running the cl100k pattern.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "text/bpe_model.h"
#include "text/bpe_tokenizer.h"
#include "text/regex_splitter.h"
#include "text/tiktoken_file.h"
#include "text/tiktoken_scanner.h"
#include "text/utf8.h"

namespace {

using stoker::BpeModel;
using stoker::BpeTokenizer;
using stoker::RegexSplitter;

std::vector<std::string> SmallVocab() {
  std::vector<std::string> v;
  for (int b = 0; b < 256; ++b) v.push_back(std::string(1, static_cast<char>(b)));
  for (const char* t : {"th", "he", "the", " t", " the", "in", "ing", "  ", "   ", "\r\n", "12",
                        "123", "\xe4\xb8", "\xe4\xb8\x80", "'s", "er", "ll", "hell", "hello"}) {
    v.push_back(t);
  }
  return v;
}

std::unique_ptr<BpeTokenizer> Make(std::string_view pattern, RegexSplitter::Dialect d, bool nfc,
                                   bool prefix_space) {
  BpeTokenizer::Config c;
  auto model = BpeModel::BuildFromRanks(SmallVocab());
  if (!model.ok()) __builtin_trap();
  c.model = std::move(model).value();
  if (prefix_space) c.stages.push_back({nullptr});
  auto split = RegexSplitter::Compile(pattern, d, "fuzz");
  if (!split.ok()) __builtin_trap();
  c.stages.push_back({std::move(split).value()});
  c.whole_piece_first = d == RegexSplitter::Dialect::kTiktoken;
  c.nfc = nfc;
  c.vocab_size = c.model.size() + 1;
  c.eos_id = static_cast<int32_t>(c.model.size());
  c.added = stoker::AddedTokens({{"<|endoftext|>", c.eos_id}});
  c.added_content.resize(c.vocab_size);
  c.added_content[c.eos_id] = "<|endoftext|>";
  return std::make_unique<BpeTokenizer>(std::move(c));
}

const std::vector<std::unique_ptr<BpeTokenizer>>& Tokenizers() {
  static const auto* all = [] {
    auto* v = new std::vector<std::unique_ptr<BpeTokenizer>>();
    v->push_back(Make(stoker::KnownTiktokenPattern("cl100k"), RegexSplitter::Dialect::kTiktoken,
                      false, false));
    v->push_back(Make(stoker::KnownTiktokenPattern("o200k"), RegexSplitter::Dialect::kTiktoken,
                      false, false));
    v->push_back(
        Make(R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)",
             RegexSplitter::Dialect::kOniguruma, true, true));
    return v;
  }();
  return *all;
}

// Three input bytes -> one code point; small values favour ASCII, where the pattern's cases are.
std::string AsUnicode(const uint8_t* data, size_t size) {
  std::string out;
  for (size_t i = 0; i + 3 <= size; i += 3) {
    uint32_t v = (uint32_t{data[i]} << 16) | (uint32_t{data[i + 1]} << 8) | data[i + 2];
    uint32_t cp = data[i] < 0xC0 ? (v & 0x7F) : (v % 0x110000);
    if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0x20;
    stoker::AppendUtf8(cp, &out);
  }
  return out;
}

std::vector<std::string> Pieces(const RegexSplitter& s, std::string_view text) {
  std::vector<std::string> out;
  if (!s.Split(text, [&](std::string_view p) { out.emplace_back(p); }).ok()) __builtin_trap();
  return out;
}

// Each hand-written scanner against PCRE2 running its pattern.
void CheckScanner(std::string_view text) {
  struct Pair {
    const RegexSplitter* fast;
    const RegexSplitter* slow;
  };
  static const std::vector<Pair>* pairs = [] {
    auto* out = new std::vector<Pair>();
    for (std::string_view pattern :
         {stoker::kCl100kPattern, stoker::kLlama3Pattern, stoker::kO200kPattern}) {
      const auto kind = RegexSplitter::Dialect::kTiktoken;
      out->push_back({RegexSplitter::Compile(pattern, kind, "fuzz").value().release(),
                      RegexSplitter::Compile(pattern, kind, "fuzz", false).value().release()});
    }
    return out;
  }();
  for (const Pair& p : *pairs) {
    if (!p.fast->uses_scanner() || p.slow->uses_scanner()) __builtin_trap();
    if (Pieces(*p.fast, text) != Pieces(*p.slow, text)) __builtin_trap();
  }
}

void CheckTokenizers(std::string_view text) {
  bool valid = stoker::FindInvalidUtf8(text) == std::string_view::npos;
  if (valid) CheckScanner(text);
  for (size_t k = 0; k < Tokenizers().size(); ++k) {
    const BpeTokenizer& t = *Tokenizers()[k];
    std::vector<int32_t> ids;
    stoker::Status st = t.Encode(text, &ids);
    if (st.ok() != valid) __builtin_trap();
    if (!valid) continue;
    for (int32_t id : ids) {
      if (id < 0 || static_cast<uint64_t>(id) >= t.vocab_size()) __builtin_trap();
    }
    std::string back;
    if (!t.Decode(ids, &back).ok()) __builtin_trap();
    // NFC and the prefix space change the text; the tiktoken ones give it back exactly.
    if (k < 2 && back != text) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  CheckTokenizers(std::string_view(reinterpret_cast<const char*>(data), size));
  CheckTokenizers(AsUnicode(data, size));
  return 0;
}
