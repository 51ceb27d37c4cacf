#include "plan/mixture_file.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

namespace stoker::plan {
namespace {

using Json = nlohmann::ordered_json;  // keeps the file's order of datasets

// Duplicate keys, which nlohmann::json would silently keep the last of: one set of keys per
// open object.
struct DuplicateKeys {
  std::vector<std::set<std::string>> open;
  std::string first;  // the first key seen twice
  bool operator()(int /*depth*/, Json::parse_event_t event, Json& value) {
    if (event == Json::parse_event_t::object_start) open.emplace_back();
    if (event == Json::parse_event_t::object_end && !open.empty()) open.pop_back();
    if (event == Json::parse_event_t::key && !open.empty() && first.empty() &&
        !open.back().insert(value.get<std::string>()).second) {
      first = value.get<std::string>();
    }
    return true;
  }
};

std::string Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

Status CheckKeys(const Json& object, std::initializer_list<const char*> allowed,
                 const std::string& where) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + "'" + a + "'";
      return InvalidArgument(where + ": unknown key '" + key + "' (expected " + list + ")");
    }
  }
  return Status::OK();
}

std::string Resolve(const std::string& path, const std::string& file) {
  const bool absolute = !path.empty() && path[0] == '/';
  const bool uri = path.find("://") != std::string::npos;
  const size_t slash = file.rfind('/');
  if (absolute || uri || slash == std::string::npos) return path;
  return file.substr(0, slash + 1) + path;
}

Result<PhaseEnd> ParseUntil(const Json& v, const std::string& where) {
  if (!v.is_string()) {
    return InvalidArgument(where + ": 'until' must be a string such as \"90%\", \"12000 steps\" " +
                           "or \"1.8T tokens\"");
  }
  const std::string text = Trim(v.get<std::string>());
  PhaseEnd end;
  std::string number;
  if (text.ends_with("%")) {
    end.unit = PhaseEnd::Unit::kShare;
    number = Trim(std::string_view(text).substr(0, text.size() - 1));
  } else if (text.ends_with("steps") || text.ends_with("step")) {
    end.unit = PhaseEnd::Unit::kSteps;
    number = Trim(std::string_view(text).substr(0, text.rfind("step")));
  } else if (text.ends_with("tokens")) {
    end.unit = PhaseEnd::Unit::kTokens;
    number = Trim(std::string_view(text).substr(0, text.size() - 6));
  } else {
    return InvalidArgument(where + ": 'until' \"" + text + "\" names no unit: write \"90%\", " +
                           "\"12000 steps\" or \"1.8T tokens\"");
  }
  if (end.unit == PhaseEnd::Unit::kShare) {
    char* stop = nullptr;
    const double pct = std::strtod(number.c_str(), &stop);
    if (number.empty() || *stop != '\0' || !(pct > 0) || !(pct <= 100)) {
      return InvalidArgument(where + ": 'until' \"" + text + "\" is not a share in (0%, 100%]");
    }
    end.value = pct / 100;
    return end;
  }
  Result<uint64_t> count = ParseCount(number);
  if (!count.ok() || *count == 0) {
    return InvalidArgument(where + ": 'until' \"" + text + "\" is not a positive count");
  }
  end.value = static_cast<double>(*count);
  return end;
}

// A weight: a number, or [start, end] for a ramp.
Status ParseWeight(const Json& v, const std::string& where, double* start, double* end,
                   bool* ramp) {
  auto number = [&](const Json& x, double* out) {
    if (!x.is_number() || !(x.get<double>() >= 0) || !std::isfinite(x.get<double>())) {
      return InvalidArgument(where + ": a weight must be a number >= 0 or [start, end]");
    }
    *out = x.get<double>();
    return Status::OK();
  };
  if (v.is_array()) {
    if (v.size() != 2) return InvalidArgument(where + ": a ramp is [start, end]");
    STOKER_RETURN_IF_ERROR(number(v[0], start));
    *ramp = true;
    return number(v[1], end);
  }
  STOKER_RETURN_IF_ERROR(number(v, start));
  *end = *start;
  return Status::OK();
}

// `where`: "FILE: phases[i]", or "FILE" for the top-level "weights".
Result<MixtureFilePhase> ParsePhase(const Json& j, const MixtureFile& m, const std::string& where,
                                    bool last) {
  if (!j.is_object()) return InvalidArgument(where + ": must be an object");
  STOKER_RETURN_IF_ERROR(CheckKeys(j, {"until", "weights"}, where));
  MixtureFilePhase phase;
  if (j.contains("until")) {
    if (last) {
      return InvalidArgument(where + ": the last phase runs to the end of the run and has no " +
                             "'until'");
    }
    STOKER_ASSIGN_OR_RETURN(phase.until, ParseUntil(j["until"], where));
  } else if (!last) {
    return InvalidArgument(where + ": 'until' is missing (only the last phase has none)");
  }
  if (!j.contains("weights") || !j["weights"].is_object()) {
    return InvalidArgument(where + ": 'weights' must be an object of dataset name -> weight");
  }
  const Json& w = j["weights"];
  for (const auto& [name, value] : w.items()) {
    if (std::find(m.names.begin(), m.names.end(), name) == m.names.end()) {
      return InvalidArgument(where + ": weights: '" + name + "' is not in 'datasets'");
    }
  }
  bool ramp = false;
  double sum = 0, end_sum = 0;
  std::vector<double> ends;
  for (const std::string& name : m.names) {
    if (!w.contains(name)) {
      return InvalidArgument(where + ": weights: no weight for '" + name +
                             "' (write 0 to leave it out of this phase)");
    }
    double a = 0, b = 0;
    STOKER_RETURN_IF_ERROR(
        ParseWeight(w[name], where + ": weights: '" + name + "'", &a, &b, &ramp));
    phase.weights.push_back(a);
    ends.push_back(b);
    sum += a;
    end_sum += b;
  }
  if (!(sum > 0) || !(end_sum > 0)) {
    return InvalidArgument(where + ": weights: they must sum to a positive number");
  }
  // A ramp in the last phase runs to the run's end, known only when the phases are resolved.
  if (ramp) phase.end_weights = std::move(ends);
  return phase;
}

}  // namespace

Result<uint64_t> ParseCount(std::string_view text) {
  const std::string t = Trim(text);
  const std::string bad = "'" + t + "' is not a count (e.g. 4096, 300M, 2T, 1.8e12)";
  if (t.empty()) return InvalidArgument(bad);
  // Suffixes (either case) and their scale.
  static constexpr std::pair<char, double> kSuffixes[] = {
      {'K', 1e3}, {'M', 1e6}, {'B', 1e9}, {'G', 1e9}, {'T', 1e12}};
  double scale = 1;
  std::string digits = t;
  for (const auto& [suffix, value] : kSuffixes) {
    if (std::toupper(static_cast<unsigned char>(t.back())) == suffix) scale = value;
  }
  if (scale != 1) digits = Trim(std::string_view(t).substr(0, t.size() - 1));
  char* stop = nullptr;
  const double v = std::strtod(digits.c_str(), &stop);
  if (digits.empty() || *stop != '\0' || !(v >= 0) || !std::isfinite(v * scale) ||
      v * scale >= 1.8e19) {
    return InvalidArgument(bad);
  }
  const double whole = std::round(v * scale);
  if (std::abs(whole - v * scale) > 1e-6 * std::max(1.0, whole)) {
    return InvalidArgument("'" + t + "' is not a whole count");
  }
  return static_cast<uint64_t>(whole);
}

// "tokens_per_step": [{"until": ..., "tokens": COUNT or [COUNT, COUNT]}, ...].
Status ParseStepTokens(const Json& list, MixtureFile* m) {
  const std::string& file = m->file;
  if (!list.is_array() || list.empty()) {
    return InvalidArgument(file + ": 'tokens_per_step' must be a non-empty list of phases");
  }
  auto count = [](const Json& x, const std::string& where) -> Result<uint64_t> {
    if (x.is_number_unsigned() && x.get<uint64_t>() > 0) return x.get<uint64_t>();
    if (x.is_string()) {
      Result<uint64_t> n = ParseCount(x.get<std::string>());
      if (n.ok() && *n > 0) return n;
    }
    return InvalidArgument(where + ": 'tokens' must be a count > 0 (4096, \"4M\") or [start, end]");
  };
  for (size_t p = 0; p < list.size(); ++p) {
    const std::string where = file + ": tokens_per_step[" + std::to_string(p) + "]";
    const Json& j = list[p];
    if (!j.is_object()) return InvalidArgument(where + ": must be an object");
    STOKER_RETURN_IF_ERROR(CheckKeys(j, {"until", "tokens"}, where));
    MixtureFileBudget b;
    const bool last = p + 1 == list.size();
    if (j.contains("until") == last) {
      return InvalidArgument(where + (last ? ": the last phase runs to the end and has no 'until'"
                                           : ": 'until' is missing (only the last has none)"));
    }
    if (!last) {
      STOKER_ASSIGN_OR_RETURN(b.until, ParseUntil(j["until"], where));
    }
    if (!j.contains("tokens")) return InvalidArgument(where + ": 'tokens' is missing");
    const Json& t = j["tokens"];
    if (t.is_array()) {
      if (t.size() != 2 || last) {
        return InvalidArgument(where + ": a ramp is [start, end], in a phase with an 'until'");
      }
      STOKER_ASSIGN_OR_RETURN(b.tokens, count(t[0], where));
      STOKER_ASSIGN_OR_RETURN(b.end_tokens, count(t[1], where));
    } else {
      STOKER_ASSIGN_OR_RETURN(b.tokens, count(t, where));
    }
    m->step_tokens.push_back(b);
  }
  return Status::OK();
}

Result<MixtureFile> ParseMixtureFile(std::string_view text, const std::string& file) {
  DuplicateKeys dups;
  Json j = Json::parse(text, std::ref(dups), /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument(file + ": not valid JSON");
  if (!dups.first.empty()) return InvalidArgument(file + ": key '" + dups.first + "' given twice");
  if (!j.is_object()) return InvalidArgument(file + ": must be a JSON object");
  STOKER_RETURN_IF_ERROR(CheckKeys(j, {"datasets", "phases", "weights", "tokens_per_step"}, file));
  MixtureFile m;
  m.file = file;
  if (j.contains("tokens_per_step"))
    STOKER_RETURN_IF_ERROR(ParseStepTokens(j["tokens_per_step"], &m));
  if (!j.contains("datasets") || !j["datasets"].is_object() || j["datasets"].empty()) {
    return InvalidArgument(file + ": 'datasets' must be an object of name -> path");
  }
  for (const auto& [name, path] : j["datasets"].items()) {
    if (!path.is_string() || path.get<std::string>().empty()) {
      return InvalidArgument(file + ": datasets: '" + name + "' must be a path or URI");
    }
    m.names.push_back(name);
    m.paths.push_back(Resolve(path.get<std::string>(), file));
  }
  for (size_t a = 0; a < m.paths.size(); ++a) {
    const size_t b = std::find(m.paths.begin(), m.paths.begin() + a, m.paths[a]) - m.paths.begin();
    if (b < a) {
      return InvalidArgument(file + ": datasets: '" + m.names[a] + "' and '" + m.names[b] +
                             "' name the same dataset " + m.paths[a]);
    }
  }
  if (j.contains("weights") == j.contains("phases")) {
    return InvalidArgument(file + ": give either 'weights' (one mixture for the whole run) or " +
                           "'phases'");
  }
  if (j.contains("weights")) {
    STOKER_ASSIGN_OR_RETURN(MixtureFilePhase phase,
                            ParsePhase(Json{{"weights", j["weights"]}}, m, file, true));
    if (!phase.end_weights.empty()) {
      return InvalidArgument(file + ": weights: a ramp needs 'phases' with an 'until'");
    }
    m.phases.push_back(std::move(phase));
    return m;
  }
  const Json& phases = j["phases"];
  if (!phases.is_array() || phases.empty()) {
    return InvalidArgument(file + ": 'phases' must be a non-empty list");
  }
  for (size_t p = 0; p < phases.size(); ++p) {
    STOKER_ASSIGN_OR_RETURN(MixtureFilePhase phase,
                            ParsePhase(phases[p], m, file + ": phases[" + std::to_string(p) + "]",
                                       p + 1 == phases.size()));
    // Ends in one unit must increase; across units they are checked once resolved.
    for (const MixtureFilePhase& before : m.phases) {
      if (before.until && phase.until && before.until->unit == phase.until->unit &&
          !(phase.until->value > before.until->value)) {
        return InvalidArgument(file + ": phases[" + std::to_string(p) +
                               "]: 'until' is not after the previous phases' ends");
      }
    }
    m.phases.push_back(std::move(phase));
  }
  return m;
}

uint64_t RunRows(const RunLength& run, uint64_t seq_len, uint64_t global_batch_rows) {
  if (run.total_steps) return *run.total_steps * global_batch_rows;
  if (run.total_tokens) return (*run.total_tokens + seq_len - 1) / seq_len;
  return 0;
}

namespace {

// The global row where a phase ending at `until` ends.
Result<uint64_t> EndRow(const PhaseEnd& until, uint64_t seq_len, uint64_t global_batch_rows,
                        std::optional<uint64_t> run_rows, const std::string& where) {
  const double v = until.value;
  switch (until.unit) {
    case PhaseEnd::Unit::kShare:
      if (!run_rows) {
        return InvalidArgument(where + ": 'until' is a share of the run: give the run's " +
                               "length (--total-tokens or --total-steps; total_tokens= or " +
                               "total_steps= in Python)");
      }
      return static_cast<uint64_t>(std::llround(v * static_cast<double>(*run_rows)));
    case PhaseEnd::Unit::kSteps:
      return static_cast<uint64_t>(v) * global_batch_rows;
    case PhaseEnd::Unit::kTokens:
      break;
  }
  return (static_cast<uint64_t>(v) + seq_len - 1) / seq_len;
}

}  // namespace

Result<std::string> ResolveStepTokens(const MixtureFile& m, uint64_t seq_len,
                                      uint64_t global_batch_rows, const RunLength& run) {
  if (m.step_tokens.empty()) return std::string();
  std::optional<uint64_t> run_rows;
  if (run.total_tokens || run.total_steps) run_rows = RunRows(run, seq_len, global_batch_rows);
  std::vector<StepBudgetPhase> phases;
  for (size_t p = 0; p < m.step_tokens.size(); ++p) {
    const MixtureFileBudget& f = m.step_tokens[p];
    StepBudgetPhase phase{UINT64_MAX, f.tokens, f.end_tokens};
    if (f.until) {
      STOKER_ASSIGN_OR_RETURN(phase.end,
                              EndRow(*f.until, seq_len, global_batch_rows, run_rows,
                                     m.file + ": tokens_per_step[" + std::to_string(p) + "]"));
    }
    phases.push_back(phase);
  }
  Result<StepBudget> budget = StepBudget::Create(std::move(phases));
  if (!budget.ok()) return budget.status().WithContext(m.file);
  return budget->Text();
}

Result<std::vector<MixturePhase>> ResolvePhases(const MixtureFile& m, uint64_t seq_len,
                                                uint64_t global_batch_rows, const RunLength& run) {
  std::optional<uint64_t> run_rows;
  if (run.total_tokens || run.total_steps) run_rows = RunRows(run, seq_len, global_batch_rows);
  std::vector<MixturePhase> out;
  if (m.phases.size() == 1 && m.phases[0].end_weights.empty()) {
    return out;  // one mixture: the datasets' own weights
  }
  uint64_t previous = 0;
  for (size_t p = 0; p < m.phases.size(); ++p) {
    const MixtureFilePhase& f = m.phases[p];
    const std::string where = m.file + ": phases[" + std::to_string(p) + "]";
    MixturePhase phase;
    phase.weights = f.weights;
    phase.end_weights = f.end_weights;
    if (f.until) {
      STOKER_ASSIGN_OR_RETURN(phase.end_row,
                              EndRow(*f.until, seq_len, global_batch_rows, run_rows, where));
      if (phase.end_row <= previous) {
        return InvalidArgument(where + ": 'until' ends at global row " +
                               std::to_string(phase.end_row) + ", not after the previous " +
                               "phase's end (row " + std::to_string(previous) + ")");
      }
      previous = phase.end_row;
    } else if (!f.end_weights.empty()) {
      if (!run_rows) {
        return InvalidArgument(where + ": a ramp in the last phase needs the run's length " +
                               "(--total-tokens or --total-steps)");
      }
      if (*run_rows <= previous) {
        return InvalidArgument(where + ": the run ends before this phase starts");
      }
      // The ramp runs to the run's end; the weights then stay at its end values.
      phase.end_row = *run_rows;
      out.push_back(phase);
      MixturePhase rest;
      rest.weights = f.end_weights;
      out.push_back(rest);
      return out;
    }
    out.push_back(std::move(phase));
  }
  return out;
}

}  // namespace stoker::plan
