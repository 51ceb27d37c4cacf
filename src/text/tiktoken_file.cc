#include "text/tiktoken_file.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <utility>

#include "common/env.h"
#include "common/file_util.h"
#include "common/hash.h"
#include "text/base64.h"
#include "text/bpe_options.h"
#include "text/tiktoken_scanner.h"

namespace stoker {
namespace {

constexpr std::string_view kR50kPattern =
    R"('(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s)";

std::string_view StripBase(std::string_view name) {
  constexpr std::string_view kSuffix = "_base";
  if (name.size() > kSuffix.size() && name.ends_with(kSuffix)) name.remove_suffix(kSuffix.size());
  return name;
}

// The special tokens tiktoken defines for each named encoding.
std::vector<AddedTokens::Token> DefaultSpecials(std::string_view name) {
  name = StripBase(name);
  if (name == "r50k" || name == "p50k") return {{"<|endoftext|>", 50256}};
  if (name == "cl100k") {
    return {{"<|endoftext|>", 100257},
            {"<|fim_prefix|>", 100258},
            {"<|fim_middle|>", 100259},
            {"<|fim_suffix|>", 100260},
            {"<|endofprompt|>", 100276}};
  }
  if (name == "o200k") return {{"<|endoftext|>", 199999}, {"<|endofprompt|>", 200018}};
  if (name == "llama3") {
    // Llama 3.1-3.3's 256 special tokens (3.0 named 128004, 128005, 128008, 128010 reserved).
    std::vector<AddedTokens::Token> t = {{"<|begin_of_text|>", 128000},
                                         {"<|end_of_text|>", 128001},
                                         {"<|reserved_special_token_0|>", 128002},
                                         {"<|reserved_special_token_1|>", 128003},
                                         {"<|finetune_right_pad_id|>", 128004},
                                         {"<|reserved_special_token_2|>", 128005},
                                         {"<|start_header_id|>", 128006},
                                         {"<|end_header_id|>", 128007},
                                         {"<|eom_id|>", 128008},
                                         {"<|eot_id|>", 128009},
                                         {"<|python_tag|>", 128010}};
    for (int32_t i = 0; i < 245; ++i) {
      t.push_back({"<|reserved_special_token_" + std::to_string(3 + i) + "|>", 128011 + i});
    }
    return t;
  }
  if (name == "llama4") {  // the named ones of Meta's Llama 4 list (its reserved ones are not)
    return {{"<|begin_of_text|>", 200000},
            {"<|end_of_text|>", 200001},
            {"<|fim_prefix|>", 200002},
            {"<|fim_middle|>", 200003},
            {"<|fim_suffix|>", 200004},
            {"<|header_start|>", 200005},
            {"<|header_end|>", 200006},
            {"<|eom|>", 200007},
            {"<|eot|>", 200008},
            {"<|step|>", 200009},
            {"<|finetune_right_pad|>", 200018}};
  }
  return {};
}

// The lines of one stretch of the file (whole lines), parsed on their own thread.
struct ParsedPart {
  struct Entry {
    uint64_t rank;
    size_t offset;  // the token's bytes: bytes[offset, offset + size)
    size_t size;
    size_t line;  // in the part
  };
  std::string bytes;  // the part's tokens, one after another
  std::vector<Entry> entries;
  size_t lines = 0;  // lines in the part
  Status error;      // the part's first bad line, after its entries
  size_t error_line = 0;
};

// Parses the lines of `text`, numbered from 1 within it (ParseRanks adds the file's path and
// the line in the file to the message of a bad line).
void ParsePart(std::string_view text, ParsedPart* out) {
  out->bytes.reserve(text.size() * 3 / 4);
  std::string_view rest = text;
  for (size_t line_no = 1; !rest.empty(); ++line_no) {
    out->lines = line_no;
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    auto fail = [&](std::string message) {
      out->error = InvalidArgument(std::move(message));
      out->error_line = line_no;
    };
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos) {
      return fail("expected 'BASE64-TOKEN RANK', found no rank");
    }
    const size_t start = out->bytes.size();
    if (!DecodeBase64(line.substr(0, sp), &out->bytes) || out->bytes.size() == start) {
      return fail("the token '" + std::string(line.substr(0, sp)) + "' is not valid base64");
    }
    std::string_view rank_text = line.substr(sp + 1);
    uint64_t rank = 0;
    auto [p, ec] = std::from_chars(rank_text.data(), rank_text.data() + rank_text.size(), rank);
    if (ec != std::errc() || p != rank_text.data() + rank_text.size()) {
      return fail("the rank '" + std::string(rank_text) + "' is not a non-negative integer");
    }
    if (rank >= static_cast<uint64_t>(INT32_MAX)) {
      return fail("rank " + std::to_string(rank) +
                  " does not fit a 32-bit token id (the vocabulary is too big)");
    }
    out->entries.push_back({rank, start, out->bytes.size() - start, line_no});
  }
}

// "BASE64-TOKEN RANK" lines into *tokens, by rank (rank_line[rank]: its line, 0 = none). The file
// is cut at line ends into parts parsed on `threads` threads (0 = DefaultThreadsPerRank); the parts
// are then taken in file order, so the first bad line (a duplicate rank included) is the one
// reported, as with one thread.
Status ParseRanks(std::string_view text, const std::string& path, int threads, TokenBytes* tokens,
                  std::vector<size_t>* rank_line) {
  size_t parts = static_cast<size_t>(threads > 0 ? threads : DefaultThreadsPerRank());
  parts = std::min<size_t>({parts, 16, std::max<size_t>(1, text.size() / (64 << 10))});
  std::vector<size_t> cut = {0};  // part p is text[cut[p], cut[p + 1])
  for (size_t p = 1; p < parts; ++p) {
    size_t nl = text.find('\n', std::max(cut.back(), text.size() * p / parts));
    if (nl == std::string_view::npos) break;
    cut.push_back(nl + 1);
  }
  cut.push_back(text.size());
  std::vector<ParsedPart> parsed(cut.size() - 1);
  RunParts(parsed.size(),
           [&](size_t p) { ParsePart(text.substr(cut[p], cut[p + 1] - cut[p]), &parsed[p]); });
  uint64_t size = 0, total = 0;
  for (const ParsedPart& part : parsed) {
    for (const auto& e : part.entries) size = std::max(size, e.rank + 1);
    total += part.bytes.size();
  }
  if (total > UINT32_MAX) return InvalidArgument(path + ": the tokens add up to more than 4 GiB");
  rank_line->assign(size, 0);
  std::vector<uint32_t> offsets(size + 1, 0);  // first each rank's size, at offsets[rank + 1]
  size_t lines_before = 0;
  for (ParsedPart& part : parsed) {
    for (const ParsedPart::Entry& e : part.entries) {
      const size_t line = lines_before + e.line;
      if ((*rank_line)[e.rank] != 0) {
        return InvalidArgument(path + ":" + std::to_string(line) + ": duplicate rank " +
                               std::to_string(e.rank) + " (first on line " +
                               std::to_string((*rank_line)[e.rank]) + ")");
      }
      (*rank_line)[e.rank] = line;
      offsets[e.rank + 1] = static_cast<uint32_t>(e.size);
    }
    if (!part.error.ok()) {
      return InvalidArgument(path + ":" + std::to_string(lines_before + part.error_line) + ": " +
                             part.error.message());
    }
    lines_before += part.lines;
  }
  for (size_t r = 0; r < size; ++r) offsets[r + 1] += offsets[r];
  std::string bytes(total, '\0');
  for (const ParsedPart& part : parsed) {
    for (const ParsedPart::Entry& e : part.entries) {
      std::memcpy(bytes.data() + offsets[e.rank], part.bytes.data() + e.offset, e.size);
    }
  }
  *tokens = TokenBytes::FromParts(std::move(bytes), std::move(offsets));
  return Status::OK();
}

}  // namespace

std::string_view KnownTiktokenPattern(std::string_view name) {
  name = StripBase(name);
  if (name == "r50k" || name == "p50k") return kR50kPattern;
  if (name == "cl100k") return kCl100kPattern;
  if (name == "o200k" || name == "llama4") return kO200kPattern;
  if (name == "llama3") return kLlama3Pattern;
  return {};
}

Result<std::unique_ptr<BpeTokenizer>> OpenTiktokenFile(const std::string& path,
                                                       const TokenizerOptions& options) {
  if (options.pattern.empty()) {
    return InvalidArgument(path +
                           ": a tiktoken file needs --pattern (r50k, p50k, cl100k, o200k, llama3, "
                           "llama4 or a regex)");
  }
  Result<std::string> bytes = ReadFileToString(path);
  if (!bytes.ok()) return bytes.status().WithContext("tiktoken file");
  TokenBytes tokens;
  std::vector<size_t> rank_line;  // rank -> line number (0 = unused)
  STOKER_RETURN_IF_ERROR(ParseRanks(*bytes, path, options.load_threads, &tokens, &rank_line));
  if (tokens.empty()) return InvalidArgument(path + ": no 'BASE64-TOKEN RANK' lines");

  std::string_view pattern = KnownTiktokenPattern(options.pattern);
  std::string pattern_name(StripBase(options.pattern));
  if (pattern.empty()) {
    pattern = options.pattern;
    pattern_name = "regex:" + Xxh3Hex(Xxh3(pattern.data(), pattern.size())).substr(0, 8);
  }
  std::vector<AddedTokens::Token> specials = DefaultSpecials(options.pattern);
  if (!options.special.empty()) {
    STOKER_ASSIGN_OR_RETURN(specials, ParseSpecialTokens(options.special));
  }
  uint64_t vocab_size = tokens.size();
  std::vector<std::string> added_content;
  for (const auto& s : specials) {
    if (static_cast<size_t>(s.id) < tokens.size() && rank_line[s.id] != 0) {
      return InvalidArgument(path + ": special token " + s.content + "=" + std::to_string(s.id) +
                             " collides with the rank on line " + std::to_string(rank_line[s.id]));
    }
    vocab_size = std::max<uint64_t>(vocab_size, static_cast<uint64_t>(s.id) + 1);
    if (added_content.size() <= static_cast<size_t>(s.id)) added_content.resize(s.id + 1);
    added_content[s.id] = s.content;
  }

  BpeTokenizer::Config c;
  {
    Result<BpeModel> model = BpeModel::BuildFromRanks(std::move(tokens), options.load_threads);
    if (!model.ok()) return InvalidArgument(path + ": " + model.status().message());
    c.model = std::move(model).value();
  }
  STOKER_ASSIGN_OR_RETURN(
      auto split,
      RegexSplitter::Compile(pattern, RegexSplitter::Dialect::kTiktoken, path + " (--pattern)"));
  c.stages.push_back({std::move(split)});
  c.whole_piece_first = true;
  STOKER_ASSIGN_OR_RETURN(c.eos_id, ResolveEos(options.eos, specials, vocab_size, path));
  if (options.allow_special && options.match_added_tokens) c.added = AddedTokens(specials);
  c.added_content = std::move(added_content);
  c.vocab_size = vocab_size;
  c.identity.kind = "tiktoken";
  c.identity.name = BaseName(path) + " pattern=" + pattern_name +
                    (options.special.empty() ? "" : " special=" + options.special) +
                    (options.allow_special ? " allow-special" : "") +
                    (options.match_added_tokens ? "" : " no-added-tokens");
  c.identity.checksum = Xxh3Hex(Xxh3(bytes->data(), bytes->size()));
  return std::make_unique<BpeTokenizer>(std::move(c));
}

}  // namespace stoker
