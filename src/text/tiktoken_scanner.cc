#include "text/tiktoken_scanner.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "text/utf8.h"

namespace stoker {
namespace {

using Bits = TiktokenScanner::Bits;

// The class bits of every code point, as PCRE2 (UTF + UCP) sees them, filled in blocks of 256 code
// points the first time a block is looked up: filling all 1.1M at once took 15-30 ms of every
// tokenizer load (the largest part after the vocabulary), for text that touches a few blocks.
class ScannerClassTable {
 public:
  static constexpr size_t kBlocks = 0x110000 >> 8;

  static ScannerClassTable& Get() {
    static ScannerClassTable* table = new ScannerClassTable();  // never destroyed: detached threads
    return *table;
  }

  const uint8_t* classes() const { return classes_.data(); }
  bool ready(size_t block) const { return ready_[block].load(std::memory_order_acquire) != 0; }

  void Fill(size_t block) {
    std::lock_guard<std::mutex> lock(mu_);
    if (ready(block)) return;
    std::string all;  // the block's code points (surrogates, not valid UTF-8, are left out)
    for (char32_t cp = static_cast<char32_t>(block << 8); cp < ((block + 1) << 8); ++cp) {
      if (cp < 0xD800 || cp > 0xDFFF) AppendUtf8(cp, &all);
    }
    for (const Set& set : sets_) Mark(set, all);
    ready_[block].store(1, std::memory_order_release);
  }

 private:
  struct Set {
    pcre2_code* code = nullptr;
    pcre2_match_data* md = nullptr;
    uint8_t bit = 0;
  };

  ScannerClassTable() : classes_(0x110000, 0), ready_(new std::atomic<uint8_t>[kBlocks]) {
    for (size_t b = 0; b < kBlocks; ++b) ready_[b].store(0, std::memory_order_relaxed);
    sets_[0] = Compile("\\p{L}+", Bits::kLetter);
    sets_[1] = Compile("\\p{N}+", Bits::kNumber);
    sets_[2] = Compile("[\\s\\x{85}]+", Bits::kSpace);
    sets_[3] = Compile("[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+", Bits::kUpper);
    sets_[4] = Compile("[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+", Bits::kLower);
    Fill(0);  // Latin-1: looked up without checking
  }

  static Set Compile(const char* pattern, uint8_t bit) {
    int err = 0;
    PCRE2_SIZE off = 0;
    Set s;
    s.bit = bit;
    s.code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED,
                           PCRE2_UTF | PCRE2_UCP, &err, &off, nullptr);
    if (!s.code) __builtin_trap();  // a fixed pattern: a programming error
    pcre2_jit_compile(s.code, PCRE2_JIT_COMPLETE);
    s.md = pcre2_match_data_create(1, nullptr);
    if (!s.md) __builtin_trap();
    return s;
  }

  // Sets `set.bit` on every code point of `all` that its pattern matches (under mu_).
  void Mark(const Set& set, std::string_view all) {
    size_t pos = 0;
    while (pos < all.size() &&
           pcre2_match(set.code, reinterpret_cast<PCRE2_SPTR>(all.data()), all.size(), pos,
                       PCRE2_NO_UTF_CHECK, set.md, nullptr) >= 0) {
      PCRE2_SIZE* ov = pcre2_get_ovector_pointer(set.md);
      for (size_t b = ov[0], len; b < ov[1]; b += len) {
        classes_[DecodeUtf8At(all, b, &len)] |= set.bit;
      }
      pos = ov[1] > ov[0] ? ov[1] : ov[0] + 1;
    }
  }

  std::vector<uint8_t> classes_;  // class bits per code point; a block is read once it is ready
  std::unique_ptr<std::atomic<uint8_t>[]> ready_;
  std::mutex mu_;  // guards filling (and the match data)
  Set sets_[5];
};

// (?i:'s|'t|'re|'ve|'m|'ll|'d) at `p`: its end, or `p` when there is none. Caseless in Unicode,
// so U+017F (long s) is an 's' too.
size_t ContractionEnd(std::string_view t, size_t p) {
  const size_t n = t.size();
  if (p + 1 >= n || t[p] != '\'') return p;
  const char a = static_cast<char>(t[p + 1] | 0x20);
  if (a == 's' || a == 'd' || a == 'm' || a == 't') return p + 2;
  if (p + 2 < n && t[p + 1] == '\xC5' && t[p + 2] == '\xBF') return p + 3;
  if (p + 2 < n) {
    const char b = static_cast<char>(t[p + 2] | 0x20);
    if ((a == 'l' && b == 'l') || (a == 'v' && b == 'e') || (a == 'r' && b == 'e')) return p + 3;
  }
  return p;
}

}  // namespace

std::optional<TiktokenScanner::Pattern> TiktokenScanner::For(std::string_view pattern) {
  if (pattern == kCl100kPattern) return Pattern::kCl100k;
  if (pattern == kLlama3Pattern) return Pattern::kLlama3;
  if (pattern == kO200kPattern) return Pattern::kO200k;
  return std::nullopt;
}

TiktokenScanner::TiktokenScanner(Pattern pattern)
    : pattern_(pattern), classes_(ScannerClassTable::Get().classes()) {}

uint8_t TiktokenScanner::ClassAtNonAscii(std::string_view t, size_t p, size_t* len) const {
  char32_t cp = DecodeUtf8At(t, p, len);
  if (cp >= 0x100) {
    ScannerClassTable& table = ScannerClassTable::Get();
    if (!table.ready(cp >> 8)) table.Fill(cp >> 8);
  }
  return classes_[cp];
}

size_t TiktokenScanner::Match(std::string_view t, size_t i) const {
  return pattern_ == Pattern::kO200k ? MatchO200k(t, i) : MatchCl100k(t, i);
}

size_t TiktokenScanner::MatchCl100k(std::string_view t, size_t i) const {
  const size_t n = t.size();
  auto run = [&](size_t p, uint8_t mask) {  // the end of the run of code points in `mask`
    size_t len;
    while (p < n && (ClassAt(t, p, &len) & mask)) p += len;
    return p;
  };
  const char ch = t[i];
  // '(?i:[sdmt]|ll|ve|re) (llama3: (?i:'s|'t|'re|'ve|'m|'ll|'d), the same strings).
  if (const size_t e = ContractionEnd(t, i); e > i) return e;
  size_t len0;
  const uint8_t c0 = ClassAt(t, i, &len0);
  // [^\r\n\p{L}\p{N}]?+\p{L}++ (llama3 without the possessives: the same matches)
  if (c0 & kLetter) return run(i + len0, kLetter);
  if (!(c0 & kNumber) && ch != '\r' && ch != '\n' && i + len0 < n) {
    size_t len1;
    if (ClassAt(t, i + len0, &len1) & kLetter) return run(i + len0 + len1, kLetter);
  }
  return MatchTail(t, i, c0, len0);
}

// o200k's two cased-word alternatives (U: [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], W: [\p{Ll}\p{Lm}\p{Lo}
// \p{M}], C: the contractions), each tried with and then without the optional prefix
// [^\r\n\p{L}\p{N}], in the order the regex's backtracking tries them:
//   U*W+C?  U* takes the whole run of U; if what follows is in W, W+ takes its run. Otherwise U*
//           gives back code points until one in W (in both sets: Lm, Lo, M) starts W+, which then
//           takes that one alone (what follows it in the run is not in W).
//   U+W*C?  the whole run of U (at least one), then the run of W after it.
size_t TiktokenScanner::MatchO200k(std::string_view t, size_t i) const {
  const size_t n = t.size();
  if (const size_t end = MatchO200kAscii(t, i); end != i) return end;
  size_t len;
  auto run = [&](size_t p, uint8_t mask) {
    while (p < n && (ClassAt(t, p, &len) & mask)) p += len;
    return p;
  };
  auto upper_lower = [&](size_t s, size_t* end) {  // U*W+C? at s
    size_t p = s, last_both = std::string_view::npos, last_both_end = 0;
    while (p < n) {
      const uint8_t c = ClassAt(t, p, &len);
      if (!(c & kUpper)) break;
      if (c & kLower) last_both = p, last_both_end = p + len;
      p += len;
    }
    if (p < n && (ClassAt(t, p, &len) & kLower)) {
      *end = ContractionEnd(t, run(p, kLower));
      return true;
    }
    if (last_both == std::string_view::npos) return false;
    *end = ContractionEnd(t, last_both_end);
    return true;
  };
  auto upper_then_lower = [&](size_t s, size_t* end) {  // U+W*C? at s
    const size_t p = run(s, kUpper);
    if (p == s) return false;
    *end = ContractionEnd(t, run(p, kLower));
    return true;
  };
  const char ch = t[i];
  size_t len0;
  const uint8_t c0 = ClassAt(t, i, &len0);
  const bool prefix = !(c0 & (kLetter | kNumber)) && ch != '\r' && ch != '\n' && i + len0 < n;
  size_t end;
  if (prefix && upper_lower(i + len0, &end)) return end;
  if ((c0 & (kUpper | kLower)) && upper_lower(i, &end)) return end;
  if (prefix && upper_then_lower(i + len0, &end)) return end;
  if ((c0 & kUpper) && upper_then_lower(i, &end)) return end;
  return MatchTail(t, i, c0, len0);
}

size_t TiktokenScanner::Contraction(std::string_view t, size_t p) { return ContractionEnd(t, p); }

// The alternatives after the words, which differ only in what follows punctuation:
// \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]* (o200k: [\r\n/]*), and in the whitespace ones:
// cl100k  \s++$|\s*[\r\n]|\s+(?!\S)|\s    llama3, o200k  \s*[\r\n]+|\s+(?!\S)|\s+
// (`[\r\n]+` ends at the run's last newline as `[\r\n]` does: the backtracking \s* stops there).
size_t TiktokenScanner::MatchTail(std::string_view t, size_t i, uint8_t c0, size_t len0) const {
  const size_t n = t.size();
  size_t len;
  if (c0 & kNumber) {
    size_t p = i + len0;
    for (int k = 1; k < 3 && p < n && (ClassAt(t, p, &len) & kNumber); ++k) p += len;
    return p;
  }
  const bool slash = pattern_ == Pattern::kO200k;
  size_t p = t[i] == ' ' ? i + 1 : i;
  if (p < n && !(ClassAt(t, p, &len) & (kLetter | kNumber | kSpace))) {
    while (p < n && !(ClassAt(t, p, &len) & (kLetter | kNumber | kSpace))) p += len;
    while (p < n && (t[p] == '\r' || t[p] == '\n' || (slash && t[p] == '/'))) ++p;
    return p;
  }
  // c0 is whitespace from here on.
  size_t end = i, last_newline = std::string_view::npos, last_start = i;
  while (end < n && (ClassAt(t, end, &len) & kSpace)) {
    if (t[end] == '\r' || t[end] == '\n') last_newline = end;
    last_start = end;
    end += len;
  }
  if (end == n && pattern_ == Pattern::kCl100k) return n;               // \s++$
  if (last_newline != std::string_view::npos) return last_newline + 1;  // \s*[\r\n]+
  if (end == n) return n;                                               // \s+(?!\S) at the end
  if (last_start > i) return last_start;                                // \s+(?!\S)
  return i + len0;                                                      // \s
}

}  // namespace stoker
