#include "plan/step_budget.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace stoker::plan {

Result<StepBudget> StepBudget::Create(std::vector<StepBudgetPhase> phases) {
  for (size_t k = 0; k < phases.size(); ++k) {
    const StepBudgetPhase& p = phases[k];
    const std::string name = "tokens_per_step phase " + std::to_string(k);
    if (p.tokens == 0) return InvalidArgument(name + ": a budget of 0 tokens");
    if (k + 1 < phases.size() && p.end == UINT64_MAX) {
      return InvalidArgument(name + ": only the last phase runs to the end; give it an end");
    }
    if (k + 1 == phases.size() && p.end != UINT64_MAX) {
      return InvalidArgument(name + ": the last phase runs to the end; leave its end out");
    }
    if (k > 0 && p.end <= phases[k - 1].end) {
      return InvalidArgument(name + ": its end must be after the previous phase's");
    }
    if (p.end_tokens > 0 && p.end == UINT64_MAX) {
      return InvalidArgument(name + ": a ramp needs an end (the last phase is constant)");
    }
  }
  StepBudget out;
  out.phases_ = std::move(phases);
  return out;
}

Result<StepBudget> StepBudget::Parse(const std::string& text) {
  std::vector<StepBudgetPhase> phases;
  auto number = [&](const std::string& t, uint64_t* out) {
    char* stop = nullptr;
    *out = std::strtoull(t.c_str(), &stop, 10);
    return !t.empty() && std::isdigit(static_cast<unsigned char>(t[0])) && *stop == '\0';
  };
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(at, end - at);
    StepBudgetPhase p;
    bool ok = true;
    if (const size_t e = item.find('@'); e != std::string::npos) {
      ok = number(item.substr(e + 1), &p.end);
      item.resize(e);
    }
    if (const size_t r = item.find(".."); r != std::string::npos) {
      ok = ok && number(item.substr(r + 2), &p.end_tokens);
      item.resize(r);
    }
    if (!ok || !number(item, &p.tokens)) {
      return InvalidArgument("tokens_per_step_schedule '" + text +
                             "': write TOKENS[..TOKENS]@END_ROW,...,TOKENS");
    }
    phases.push_back(p);
    at = end + 1;
  }
  return Create(std::move(phases));
}

uint64_t StepBudget::TokensAt(uint64_t position) const {
  uint64_t begin = 0;
  for (const StepBudgetPhase& p : phases_) {
    if (position < p.end) {
      if (p.end_tokens == 0 || p.end_tokens == p.tokens) return p.tokens;
      // Linear from `tokens` at `begin` to `end_tokens` at `end`, in exact integers.
      const unsigned __int128 span = p.end - begin, done = position - begin;
      if (p.end_tokens > p.tokens) {
        return p.tokens + static_cast<uint64_t>(done * (p.end_tokens - p.tokens) / span);
      }
      return p.tokens - static_cast<uint64_t>(done * (p.tokens - p.end_tokens) / span);
    }
    begin = p.end;
  }
  return phases_.empty() ? 0 : phases_.back().tokens;
}

std::string StepBudget::Text() const {
  std::string out;
  for (const StepBudgetPhase& p : phases_) {
    if (!out.empty()) out += ",";
    out += std::to_string(p.tokens);
    if (p.end_tokens > 0) out += ".." + std::to_string(p.end_tokens);
    if (p.end != UINT64_MAX) out += "@" + std::to_string(p.end);
  }
  return out;
}

}  // namespace stoker::plan
