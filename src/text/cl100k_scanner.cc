#include "text/cl100k_scanner.h"

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

// The code point of the UTF-8 sequence at `p` of valid `t`; *len its length.
char32_t DecodeAt(std::string_view t, size_t p, size_t* len) {
  unsigned char c = static_cast<unsigned char>(t[p]);
  auto cont = [&](size_t k) { return static_cast<char32_t>(t[p + k] & 0x3F); };
  if (c < 0x80) return *len = 1, c;
  if (c < 0xE0) return *len = 2, ((c & 0x1Fu) << 6) | cont(1);
  if (c < 0xF0) return *len = 3, ((c & 0x0Fu) << 12) | (cont(1) << 6) | cont(2);
  return *len = 4, ((c & 0x07u) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
}

// The class of every code point, as PCRE2 (UTF + UCP) sees it, filled in blocks of 256 code
// points the first time a block is looked up: filling all 1.1M at once took 15-30 ms of every
// tokenizer load (the largest part after the vocabulary), for text that touches a few blocks.
class ClassTable {
 public:
  static constexpr size_t kBlocks = 0x110000 >> 8;

  static ClassTable& Get() {
    static ClassTable* table = new ClassTable();  // never destroyed: used by detached threads
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
    Mark(letter_, Cl100kScanner::kLetter, all);
    Mark(number_, Cl100kScanner::kNumber, all);
    Mark(space_, Cl100kScanner::kSpace, all);
    ready_[block].store(1, std::memory_order_release);
  }

 private:
  struct Pattern {
    pcre2_code* code = nullptr;
    pcre2_match_data* md = nullptr;
  };

  ClassTable()
      : classes_(0x110000, Cl100kScanner::kOther), ready_(new std::atomic<uint8_t>[kBlocks]) {
    for (size_t b = 0; b < kBlocks; ++b) ready_[b].store(0, std::memory_order_relaxed);
    letter_ = Compile("\\p{L}+");
    number_ = Compile("\\p{N}+");
    space_ = Compile("[\\s\\x{85}]+");
    Fill(0);  // Latin-1: looked up without checking
  }

  static Pattern Compile(const char* pattern) {
    int err = 0;
    PCRE2_SIZE off = 0;
    Pattern p;
    p.code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED,
                           PCRE2_UTF | PCRE2_UCP, &err, &off, nullptr);
    if (!p.code) __builtin_trap();  // a fixed pattern: a programming error
    pcre2_jit_compile(p.code, PCRE2_JIT_COMPLETE);
    p.md = pcre2_match_data_create(1, nullptr);
    if (!p.md) __builtin_trap();
    return p;
  }

  // Marks every code point of `all` that `pattern` matches as `cls` (under mu_).
  void Mark(const Pattern& pattern, uint8_t cls, std::string_view all) {
    size_t pos = 0;
    while (pos < all.size() &&
           pcre2_match(pattern.code, reinterpret_cast<PCRE2_SPTR>(all.data()), all.size(), pos,
                       PCRE2_NO_UTF_CHECK, pattern.md, nullptr) >= 0) {
      PCRE2_SIZE* ov = pcre2_get_ovector_pointer(pattern.md);
      for (size_t b = ov[0], len; b < ov[1]; b += len) classes_[DecodeAt(all, b, &len)] = cls;
      pos = ov[1] > ov[0] ? ov[1] : ov[0] + 1;
    }
  }

  std::vector<uint8_t> classes_;  // one Class per code point; a block is read once it is ready
  std::unique_ptr<std::atomic<uint8_t>[]> ready_;
  std::mutex mu_;  // guards filling (and the match data)
  Pattern letter_, number_, space_;
};

}  // namespace

Cl100kScanner::Cl100kScanner() : classes_(ClassTable::Get().classes()) {}

Cl100kScanner::Class Cl100kScanner::ClassAt(std::string_view t, size_t p, size_t* len) const {
  char32_t cp = DecodeAt(t, p, len);
  if (cp >= 0x100) {
    ClassTable& table = ClassTable::Get();
    if (!table.ready(cp >> 8)) table.Fill(cp >> 8);
  }
  return static_cast<Class>(classes_[cp]);
}

size_t Cl100kScanner::Match(std::string_view t, size_t i) const {
  const size_t n = t.size();
  // ClassAt with ASCII read straight from the table: most of prose and code is ASCII, and the
  // call and the UTF-8 decoding were 15% of the samples of a cl100k pack in perf.
  auto class_at = [&](size_t p, size_t* len) {
    const auto c = static_cast<unsigned char>(t[p]);
    if (c < 0x80) {
      *len = 1;
      return static_cast<Class>(classes_[c]);
    }
    return ClassAt(t, p, len);
  };
  auto run = [&](size_t p, Class cls) {
    size_t len;
    while (p < n && class_at(p, &len) == cls) p += len;
    return p;
  };
  const char ch = t[i];
  // '(?i:[sdmt]|ll|ve|re): caseless in Unicode, so U+017F (long s) is an 's' too.
  if (ch == '\'' && i + 1 < n) {
    char a = static_cast<char>(t[i + 1] | 0x20);
    if (a == 's' || a == 'd' || a == 'm' || a == 't') return i + 2;
    if (i + 2 < n && t[i + 1] == '\xC5' && t[i + 2] == '\xBF') return i + 3;
    if (i + 2 < n) {
      char b = static_cast<char>(t[i + 2] | 0x20);
      if ((a == 'l' && b == 'l') || (a == 'v' && b == 'e') || (a == 'r' && b == 'e')) {
        return i + 3;
      }
    }
  }
  size_t len0;
  const Class c0 = class_at(i, &len0);
  // [^\r\n\p{L}\p{N}]?+\p{L}++
  if (c0 == kLetter) return run(i + len0, kLetter);
  if (c0 != kNumber && ch != '\r' && ch != '\n' && i + len0 < n) {
    size_t len1;
    if (class_at(i + len0, &len1) == kLetter) return run(i + len0 + len1, kLetter);
  }
  // \p{N}{1,3}+
  if (c0 == kNumber) {
    size_t p = i + len0, len;
    for (int k = 1; k < 3 && p < n && class_at(p, &len) == kNumber; ++k) p += len;
    return p;
  }
  //  ?[^\s\p{L}\p{N}]++[\r\n]*+
  size_t p = ch == ' ' ? i + 1 : i;
  size_t len;
  if (p < n && class_at(p, &len) == kOther) {
    p = run(p + len, kOther);
    while (p < n && (t[p] == '\r' || t[p] == '\n')) ++p;
    return p;
  }
  // c0 is whitespace from here on.
  size_t end = i, last_newline = std::string_view::npos, last_start = i;
  while (end < n && class_at(end, &len) == kSpace) {
    if (t[end] == '\r' || t[end] == '\n') last_newline = end;
    last_start = end;
    end += len;
  }
  if (end == n) return n;                                               // \s++$
  if (last_newline != std::string_view::npos) return last_newline + 1;  // \s*[\r\n]
  if (last_start > i) return last_start;                                // \s+(?!\S)
  return i + len0;                                                      // \s
}

}  // namespace stoker
