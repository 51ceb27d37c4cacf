// ProgressReporter: shows how far a long job (pack, verify) has come.
//
// On a terminal it redraws one line with '\r' (a bar, items, MB/s and ETA) at most every 100 ms;
// elsewhere (a log file, CI) it prints a plain line every few seconds. Finish() always prints a
// one-line summary. Thread-safe: Add() may be called from many worker threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>

namespace stoker {

class ProgressReporter {
 public:
  enum class Mode { kAuto, kTerminal, kPlain, kSilent };

  struct Options {
    std::string label = "progress";   // e.g. "verify", "pack"
    std::string item_name = "items";  // e.g. "documents", "shards"
    uint64_t total_items = 0;         // 0 = unknown
    uint64_t total_bytes = 0;         // 0 = unknown; when known the bar and ETA follow bytes
    Mode mode = Mode::kAuto;          // kAuto: kTerminal if `out` is a tty, else kPlain
    std::FILE* out = stderr;
    double terminal_interval_s = 0.1;
    double plain_interval_s = 5.0;
    // Seconds on a monotonic clock; tests inject a fake one.
    std::function<double()> clock;
  };

  // A point-in-time view of the counters, for rendering.
  struct Snapshot {
    uint64_t items = 0;
    uint64_t bytes = 0;
    uint64_t total_items = 0;
    uint64_t total_bytes = 0;
    double elapsed_s = 0;
  };

  explicit ProgressReporter(Options options);
  ~ProgressReporter();  // does not print; call Finish()
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  // Sets the totals once they are known (e.g. after reading a manifest); 0 = unknown.
  void SetTotals(uint64_t total_items, uint64_t total_bytes);
  // Counts work done and redraws if the interval has passed.
  void Add(uint64_t items, uint64_t bytes);
  // Prints the final summary line (once; later calls do nothing). `ok` = false adds "failed".
  void Finish(bool ok = true);

  Snapshot snapshot() const;
  Mode mode() const { return mode_; }

  // "verify [#######.............]  35%  1,234/3,456 documents  120.5 MB/s  ETA 0:12"
  static std::string RenderBar(const std::string& label, const std::string& item_name,
                               const Snapshot& s, int width = 30);
  // "verify: 1,234/3,456 documents, 1.50 GiB, 120.5 MB/s, ETA 0:12"
  static std::string RenderPlain(const std::string& label, const std::string& item_name,
                                 const Snapshot& s);
  // "verify: done: 3,456 documents, 1.50 GiB in 0:12 (120.5 MB/s)"
  static std::string RenderSummary(const std::string& label, const std::string& item_name,
                                   const Snapshot& s, bool ok);

 private:
  double Now() const;
  void MaybeDraw(bool force);

  Options options_;
  Mode mode_;
  double start_s_;
  std::atomic<uint64_t> total_items_{0};
  std::atomic<uint64_t> total_bytes_{0};
  std::atomic<uint64_t> items_{0};
  std::atomic<uint64_t> bytes_{0};
  std::atomic<double> next_draw_s_{0};
  std::mutex draw_mu_;     // one thread draws at a time; others skip instead of waiting
  bool drew_bar_ = false;  // guarded by draw_mu_
  bool finished_ = false;  // guarded by draw_mu_
};

// "1234567" -> "1,234,567".
std::string FormatCount(uint64_t n);

}  // namespace stoker
