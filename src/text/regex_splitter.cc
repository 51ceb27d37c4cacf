#include "text/regex_splitter.h"

#include <algorithm>
#include <optional>

#include "text/regex_translate.h"
#include "text/utf8.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace stoker {
namespace {

// The per-thread state PCRE2 needs to match: one ovector pair and a JIT stack large enough for
// the lookahead alternative (`\s+(?!\S)`) over long whitespace runs. Pattern-independent.
struct ThreadMatchState {
  pcre2_match_data* data = nullptr;
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* stack = nullptr;
  ThreadMatchState() {
    data = pcre2_match_data_create(1, nullptr);
    context = pcre2_match_context_create(nullptr);
    stack = pcre2_jit_stack_create(32 * 1024, 64 * 1024 * 1024, nullptr);
    if (context && stack) pcre2_jit_stack_assign(context, nullptr, stack);
  }
  ~ThreadMatchState() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
};

ThreadMatchState& MatchState() {
  thread_local ThreadMatchState state;
  return state;
}

}  // namespace

struct RegexSplitter::Code {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Code() { pcre2_code_free(code); }
};

Result<std::unique_ptr<RegexSplitter>> RegexSplitter::Compile(std::string_view pattern,
                                                              Dialect dialect,
                                                              std::string_view origin,
                                                              bool allow_scanner, Behavior behavior,
                                                              bool invert) {
  std::string widened = TranslateToPcre2(pattern, dialect == Dialect::kOniguruma);
  uint32_t options = PCRE2_UTF | PCRE2_UCP | PCRE2_NEVER_BACKSLASH_C;
  options |= dialect == Dialect::kTiktoken ? PCRE2_DOLLAR_ENDONLY : PCRE2_MULTILINE;
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(widened.data()), widened.size(),
                                   options, &error, &offset, nullptr);
  if (!code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof(message));
    return InvalidArgument(std::string(origin) + ": the pre-tokenizer pattern does not compile: " +
                           reinterpret_cast<const char*>(message) + " (near offset " +
                           std::to_string(offset) + " of /" + std::string(pattern) + "/)");
  }
  std::unique_ptr<RegexSplitter> s(new RegexSplitter());
  s->code_ = std::make_unique<Code>();
  s->code_->code = code;
  s->code_->jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  s->pattern_ = std::string(pattern);
  s->keep_gaps_ = dialect == Dialect::kOniguruma;
  s->behavior_ = behavior;
  s->invert_ = invert;
  if (dialect == Dialect::kOniguruma && behavior == Behavior::kRemoved) {
    // The delimiters go: the matches, or (inverted) the text between them.
    s->keep_gaps_ = !invert;
    s->keep_matches_ = invert;
  }
  s->merging_ = dialect == Dialect::kOniguruma && behavior != Behavior::kIsolated &&
                behavior != Behavior::kRemoved;
  const std::optional<TiktokenScanner::Pattern> scanned = TiktokenScanner::For(pattern);
  if (allow_scanner && dialect == Dialect::kTiktoken && scanned &&
      behavior == Behavior::kIsolated && !invert) {
    s->scanner_ = std::make_unique<TiktokenScanner>(*scanned);
  }
  return s;
}

RegexSplitter::~RegexSplitter() = default;

Status RegexSplitter::Next(std::string_view text, size_t pos, size_t* start, size_t* end) const {
  ThreadMatchState& st = MatchState();
  if (!st.data || !st.context) return Internal("PCRE2: out of memory for match data");
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  while (pos < text.size()) {
    int rc = code_->jit
                 ? pcre2_jit_match(code_->code, subject, text.size(), pos, 0, st.data, st.context)
                 : pcre2_match(code_->code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, st.data,
                               st.context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof(message));
      return Internal("pre-tokenizer regex failed at byte " + std::to_string(pos) + ": " +
                      reinterpret_cast<const char*>(message));
    }
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(st.data);
    if (ov[1] > ov[0]) {
      *start = ov[0];
      *end = ov[1];
      return Status::OK();
    }
    // An empty match: like the reference iterators, step over one character and search on.
    if (ov[0] >= text.size()) break;
    pos = ov[0] + Utf8SequenceLength(static_cast<unsigned char>(text[ov[0]]));
  }
  *start = std::string_view::npos;
  *end = text.size();
  return Status::OK();
}

// tokenizers' Split (split.rs) over the segments of the text, each a match or the text between
// two: MergedWithPrevious appends a delimiter to the piece before it (unless that one is a
// delimiter too), MergedWithNext prepends it to the piece after it (unless that one is a
// delimiter), Contiguous joins runs of delimiters. Empty matches are skipped, as Next does.
Status RegexSplitter::SplitMerging(std::string_view text,
                                   std::vector<std::string_view>* pieces) const {
  struct Segment {
    size_t start, end;
    bool delimiter;
  };
  thread_local std::vector<Segment> segments;
  segments.clear();
  size_t pos = 0;
  while (pos < text.size()) {
    size_t start, end;
    STOKER_RETURN_IF_ERROR(Next(text, pos, &start, &end));
    if (start == std::string_view::npos) start = end = text.size();
    if (start > pos) segments.push_back({pos, start, invert_});
    if (end > start) segments.push_back({start, end, !invert_});
    pos = end;
  }
  std::vector<Segment> merged;
  bool previous_delimiter = false;
  if (behavior_ == Behavior::kMergedWithNext) {
    for (size_t i = segments.size(); i-- > 0;) {
      const Segment& s = segments[i];
      if (s.delimiter && !previous_delimiter && !merged.empty()) {
        merged.back().start = s.start;
      } else {
        merged.push_back(s);
      }
      previous_delimiter = s.delimiter;
    }
    std::reverse(merged.begin(), merged.end());
  } else {
    for (const Segment& s : segments) {
      bool join = behavior_ == Behavior::kContiguous
                      ? s.delimiter == previous_delimiter
                      : s.delimiter && !previous_delimiter;  // kMergedWithPrevious
      if (join && !merged.empty()) {
        merged.back().end = s.end;
      } else {
        merged.push_back(s);
      }
      previous_delimiter = s.delimiter;
    }
  }
  for (const Segment& s : merged) pieces->push_back(text.substr(s.start, s.end - s.start));
  return Status::OK();
}

}  // namespace stoker
