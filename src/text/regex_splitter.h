// RegexSplitter: cuts text into pre-tokens with a PCRE2 pattern compiled with JIT (UTF + UCP).
//
// Two dialects, because the reference libraries differ: tiktoken (Rust `regex`/`fancy-regex`)
// drops text between matches and reads `$` as the end of the text; tokenizers (Oniguruma, Ruby
// syntax) keeps the text between matches as pre-tokens of their own ("Isolated") and reads `^`/`$`
// as line anchors, and `X{n,m}+` as `(?:X{n,m})+` (not possessive). See regex_translate.h.
// Thread-safe after Compile: each thread matches with its own match data and JIT stack.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/status.h"
#include "text/tiktoken_scanner.h"

namespace stoker {

class RegexSplitter {
 public:
  enum class Dialect { kTiktoken, kOniguruma };
  // tokenizers' SplitDelimiterBehavior: what becomes of the matches (the "delimiters") and of the
  // text between them. The tiktoken dialect always drops the text between matches.
  enum class Behavior { kIsolated, kRemoved, kMergedWithPrevious, kMergedWithNext, kContiguous };

  // kInvalidArgument naming `origin` and the offset in the pattern if it does not compile.
  // tiktoken's cl100k and o200k patterns and Llama 3's run on the identical hand-written
  // TiktokenScanner unless `allow_scanner` is false (for the differential tests). `behavior` and
  // `invert` (the text between matches is taken as the delimiters, the matches as the rest) are
  // tokenizers' Split options, for the Oniguruma dialect.
  static Result<std::unique_ptr<RegexSplitter>> Compile(std::string_view pattern, Dialect dialect,
                                                        std::string_view origin,
                                                        bool allow_scanner = true,
                                                        Behavior behavior = Behavior::kIsolated,
                                                        bool invert = false);
  ~RegexSplitter();
  RegexSplitter(const RegexSplitter&) = delete;
  RegexSplitter& operator=(const RegexSplitter&) = delete;

  // Calls fn(piece) for each pre-token of `text` (valid UTF-8) in order; empty pieces are never
  // passed. Returns an error only if the regex engine gives up (e.g. its stack limit).
  template <typename Fn>
  Status Split(std::string_view text, Fn&& fn) const {
    if (scanner_) {
      scanner_->Split(text, fn);
      return Status::OK();
    }
    if (merging_) {
      std::vector<std::string_view> pieces;  // not thread_local: fn may split with another stage
      STOKER_RETURN_IF_ERROR(SplitMerging(text, &pieces));
      for (std::string_view p : pieces) fn(p);
      return Status::OK();
    }
    size_t pos = 0;
    while (pos < text.size()) {
      size_t start, end;
      STOKER_RETURN_IF_ERROR(Next(text, pos, &start, &end));
      if (start == std::string_view::npos) {
        if (keep_gaps_) fn(text.substr(pos));
        break;
      }
      if (keep_gaps_ && start > pos) fn(text.substr(pos, start - pos));
      if (keep_matches_ && end > start) fn(text.substr(start, end - start));
      pos = end;
    }
    return Status::OK();
  }

  const std::string& pattern() const { return pattern_; }
  bool uses_scanner() const { return scanner_ != nullptr; }

 private:
  RegexSplitter() = default;
  // The next match at or after `pos`: [*start, *end), *end > pos; *start = npos if none. An empty
  // match is skipped over by one character.
  Status Next(std::string_view text, size_t pos, size_t* start, size_t* end) const;
  // The pieces of the merging behaviours (MergedWithPrevious, MergedWithNext, Contiguous).
  Status SplitMerging(std::string_view text, std::vector<std::string_view>* pieces) const;

  struct Code;
  std::unique_ptr<Code> code_;
  std::unique_ptr<TiktokenScanner> scanner_;
  std::string pattern_;
  bool keep_gaps_ = false;    // the text between matches is a piece
  bool keep_matches_ = true;  // the matches are pieces
  bool merging_ = false;      // behavior_ merges pieces: SplitMerging
  bool invert_ = false;
  Behavior behavior_ = Behavior::kIsolated;
};

}  // namespace stoker
