#include "loader/stall_monitor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "common/clock.h"

namespace stoker::loader {

StallMonitor::StallMonitor(StallMonitorOptions options) : options_(std::move(options)) {
  if (!options_.sink) {
    options_.sink = [](const std::string& line) {
      std::fprintf(stderr, "stoker: warning: %s\n", line.c_str());
    };
  }
}

double StallMonitor::Now() const {
  if (options_.clock) return options_.clock();
  return static_cast<double>(SteadyNowNs()) * 1e-9;
}

namespace {
int64_t ToNs(double s) { return static_cast<int64_t>(std::llround(s * 1e9)); }
}  // namespace

void StallMonitor::Sums::Add(const Entry& e, int sign) {
  wait_ns += sign * ToNs(e.wait_s);
  consumer_ns += sign * ToNs(e.consumer_s);
  if (e.produce_s < 0) {
    unknown_produce += sign;
  } else {
    produce_ns += sign * ToNs(e.produce_s);
  }
  tokens += sign * e.tokens;
}

void StallMonitor::PopFrontLocked() {
  sums_.Add(entries_.front(), -1);
  entries_.pop_front();
}

void StallMonitor::Record(double wait_s, double consumer_s, uint64_t tokens, double produce_s) {
  const double now = Now();
  std::string warning;
  {
    std::lock_guard<std::mutex> lock(mu_);
    entries_.push_back({now, std::max(0.0, wait_s), std::max(0.0, consumer_s), produce_s, tokens});
    sums_.Add(entries_.back(), +1);
    // An entry covers the interval ending at its time stamp; drop those that ended before the
    // window, but keep at least one so a very slow step still has a verdict.
    while (entries_.size() > 1 && (entries_.front().t_s < now - options_.window_s ||
                                   entries_.size() > std::max<uint64_t>(1, options_.max_batches))) {
      PopFrontLocked();
    }
    StallWindow w = ComputeLocked(now);
    warning = JudgeLocked(w);
    if (!warning.empty() && (!warned_ || now - last_warn_s_ >= options_.warn_interval_s)) {
      warned_ = true;
      last_warn_s_ = now;
      ++warnings_;
    } else {
      warning.clear();
    }
  }
  // The sink runs outside the lock: it may log, block, or even call Window().
  if (!warning.empty()) options_.sink(warning);
}

StallWindow StallMonitor::ComputeLocked(double now_s) const {
  StallWindow w;
  if (entries_.empty()) return w;
  // Record() trims the deque; Window() may run later, so take out what has aged out since (a
  // prefix, usually empty).
  Sums sums = sums_;
  auto first = entries_.begin();
  while (entries_.end() - first > 1 && first->t_s < now_s - options_.window_s) {
    sums.Add(*first, -1);
    ++first;
  }
  w.batches = entries_.end() - first;
  w.tokens = sums.tokens;
  w.wait_s = sums.wait_ns * 1e-9;
  w.consumer_s = sums.consumer_ns * 1e-9;
  w.produce_s = sums.produce_ns * 1e-9;
  w.produce_known = sums.unknown_produce == 0;
  // The first entry's interval began one wait + step before its stamp.
  w.span_s = now_s - first->t_s + first->wait_s + first->consumer_s;
  const double cycle_s = w.wait_s + w.consumer_s;
  if (cycle_s > 0) w.stall_share = w.wait_s / cycle_s;
  if (w.consumer_s > 0) w.consumed_tokens_per_s = w.tokens / w.consumer_s;
  if (w.produce_known && w.produce_s > 0) {
    w.deliverable_tokens_per_s = w.tokens / w.produce_s;
    // ratio = deliverable / consumed = consumer time / produce time.
    w.ratio = w.consumer_s / w.produce_s;
  } else if (w.produce_known) {
    w.produce_known = false;  // zero produce time: nothing measurable
  }
  return w;
}

std::string StallMonitor::JudgeLocked(const StallWindow& w) const {
  if (w.batches < options_.min_batches) return "";
  if (w.wait_s + w.consumer_s < options_.min_evidence_s) return "";
  if (w.consumer_s < options_.min_consumer_step_s * static_cast<double>(w.batches)) return "";
  char buf[480];
  if (w.produce_known && w.consumer_s > 0 && w.ratio < options_.min_ratio) {
    std::snprintf(buf, sizeof(buf),
                  "the loader can deliver %.3g tokens/s but training consumes %.3g tokens/s "
                  "(%.2fx, below %.2fx) over the last %llu batches; the consumer waited %.1f%% "
                  "of the time. Run `stoker doctor` for advice; silence this with "
                  "monitor_warnings=False.",
                  w.deliverable_tokens_per_s, w.consumed_tokens_per_s, w.ratio, options_.min_ratio,
                  static_cast<unsigned long long>(w.batches), 100 * w.stall_share);
    return buf;
  }
  if (w.stall_share > options_.max_stall_share) {
    std::snprintf(buf, sizeof(buf),
                  "data stall: the consumer waited %.1f%% of the time for batches (threshold "
                  "%.1f%%) over the last %llu batches (%.2f s of %.2f s). Run `stoker doctor` "
                  "for advice; silence this with monitor_warnings=False.",
                  100 * w.stall_share, 100 * options_.max_stall_share,
                  static_cast<unsigned long long>(w.batches), w.wait_s, w.wait_s + w.consumer_s);
    return buf;
  }
  return "";
}

StallWindow StallMonitor::Window() const {
  const double now = Now();
  std::lock_guard<std::mutex> lock(mu_);
  return ComputeLocked(now);
}

uint64_t StallMonitor::warnings() const {
  std::lock_guard<std::mutex> lock(mu_);
  return warnings_;
}

}  // namespace stoker::loader
