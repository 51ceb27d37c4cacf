#include "common/progress.h"

#include <unistd.h>

#include <chrono>
#include <cmath>

#include "common/human_size.h"

namespace stoker {
namespace {

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Fraction done (0..1) by bytes if their total is known, else by items; negative if unknown.
double Fraction(const ProgressReporter::Snapshot& s) {
  if (s.total_bytes > 0) return std::min(1.0, static_cast<double>(s.bytes) / s.total_bytes);
  if (s.total_items > 0) return std::min(1.0, static_cast<double>(s.items) / s.total_items);
  return -1;
}

std::string Eta(const ProgressReporter::Snapshot& s) {
  double f = Fraction(s);
  if (f <= 0 || s.elapsed_s <= 0) return "ETA ?";
  return "ETA " + FormatDuration(s.elapsed_s * (1 - f) / f);
}

double Rate(const ProgressReporter::Snapshot& s) {
  return s.elapsed_s > 0 ? static_cast<double>(s.bytes) / s.elapsed_s : 0;
}

std::string Items(const ProgressReporter::Snapshot& s, const std::string& item_name) {
  std::string out = FormatCount(s.items);
  if (s.total_items > 0) out.append("/").append(FormatCount(s.total_items));
  return out.append(" ").append(item_name);
}

}  // namespace

std::string FormatCount(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

ProgressReporter::ProgressReporter(Options options) : options_(std::move(options)) {
  mode_ = options_.mode;
  if (mode_ == Mode::kAuto) {
    mode_ = options_.out != nullptr && ::isatty(::fileno(options_.out)) ? Mode::kTerminal
                                                                        : Mode::kPlain;
  }
  if (options_.out == nullptr) mode_ = Mode::kSilent;
  start_s_ = Now();
  SetTotals(options_.total_items, options_.total_bytes);
  next_draw_s_ = start_s_ + (mode_ == Mode::kTerminal ? options_.terminal_interval_s
                                                      : options_.plain_interval_s);
}

ProgressReporter::~ProgressReporter() = default;

double ProgressReporter::Now() const { return options_.clock ? options_.clock() : SteadySeconds(); }

ProgressReporter::Snapshot ProgressReporter::snapshot() const {
  Snapshot s;
  s.items = items_.load(std::memory_order_relaxed);
  s.bytes = bytes_.load(std::memory_order_relaxed);
  s.total_items = total_items_.load(std::memory_order_relaxed);
  s.total_bytes = total_bytes_.load(std::memory_order_relaxed);
  s.elapsed_s = Now() - start_s_;
  return s;
}

void ProgressReporter::SetTotals(uint64_t total_items, uint64_t total_bytes) {
  total_items_.store(total_items, std::memory_order_relaxed);
  total_bytes_.store(total_bytes, std::memory_order_relaxed);
}

void ProgressReporter::Add(uint64_t items, uint64_t bytes) {
  items_.fetch_add(items, std::memory_order_relaxed);
  bytes_.fetch_add(bytes, std::memory_order_relaxed);
  if (mode_ == Mode::kSilent) return;
  if (Now() >= next_draw_s_.load(std::memory_order_relaxed)) MaybeDraw(false);
}

void ProgressReporter::MaybeDraw(bool force) {
  std::unique_lock<std::mutex> lock(draw_mu_, std::try_to_lock);
  if (!lock.owns_lock() || finished_) return;
  double now = Now();
  if (!force && now < next_draw_s_.load()) return;
  bool terminal = mode_ == Mode::kTerminal;
  next_draw_s_ = now + (terminal ? options_.terminal_interval_s : options_.plain_interval_s);
  Snapshot s = snapshot();
  if (terminal) {
    // "\033[K" clears what a longer previous line left behind.
    std::fprintf(options_.out, "\r%s\033[K",
                 RenderBar(options_.label, options_.item_name, s).c_str());
    drew_bar_ = true;
  } else {
    std::fprintf(options_.out, "%s\n", RenderPlain(options_.label, options_.item_name, s).c_str());
  }
  std::fflush(options_.out);
}

void ProgressReporter::Finish(bool ok) {
  std::lock_guard<std::mutex> lock(draw_mu_);
  if (finished_ || mode_ == Mode::kSilent) {
    finished_ = true;
    return;
  }
  finished_ = true;
  Snapshot s = snapshot();
  if (drew_bar_) std::fprintf(options_.out, "\r\033[K");
  std::fprintf(options_.out, "%s\n",
               RenderSummary(options_.label, options_.item_name, s, ok).c_str());
  std::fflush(options_.out);
}

std::string ProgressReporter::RenderBar(const std::string& label, const std::string& item_name,
                                        const Snapshot& s, int width) {
  std::string line = label + " [";
  double f = Fraction(s);
  int filled = f < 0 ? 0 : static_cast<int>(std::floor(f * width));
  line.append(filled, '#');
  line.append(width - filled, '.');
  line += "] ";
  if (f >= 0) {
    char pct[8];
    std::snprintf(pct, sizeof(pct), "%3d%%", static_cast<int>(std::floor(f * 100)));
    line += pct;
    line += "  ";
  }
  line += Items(s, item_name) + "  " + FormatRate(Rate(s)) + "  " + Eta(s);
  return line;
}

std::string ProgressReporter::RenderPlain(const std::string& label, const std::string& item_name,
                                          const Snapshot& s) {
  return label + ": " + Items(s, item_name) + ", " + FormatSize(s.bytes) + ", " +
         FormatRate(Rate(s)) + ", " + Eta(s);
}

std::string ProgressReporter::RenderSummary(const std::string& label, const std::string& item_name,
                                            const Snapshot& s, bool ok) {
  return label + ": " + (ok ? "done: " : "failed after ") + FormatCount(s.items) + " " + item_name +
         ", " + FormatSize(s.bytes) + " in " + FormatDuration(s.elapsed_s) + " (" +
         FormatRate(Rate(s)) + ")";
}

}  // namespace stoker
