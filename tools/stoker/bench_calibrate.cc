#include "bench_calibrate.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_common.h"

namespace stoker::cli {
namespace {

// "a,b,c" as the Loader's model= and --model-config read it: each number in its shortest form
// that reads back exactly (as Python's CostModel.model_string() writes it).
std::string CalibratedModelSpec(const plan::CostModel& m) {
  return nlohmann::json(m.a).dump() + "," + nlohmann::json(m.b).dump() + "," +
         nlohmann::json(m.c).dump();
}

Status CalibrateLineError(const std::string& path, size_t line, const std::string& what) {
  return InvalidArgument(path + " line " + std::to_string(line) + ": " + what +
                         " (expected {\"lengths\": [L, ...], \"seconds\": s}, one microbatch a "
                         "line, as stoker.calibrate(..., save=PATH) writes)");
}

}  // namespace

Result<std::vector<plan::CostSample>> ReadCostSamples(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgument("cannot read " + path + " (give the file of measured times)");
  std::vector<plan::CostSample> samples;
  std::string text;
  for (size_t line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return CalibrateLineError(path, line, "not a JSON object");
    }
    auto lengths = j.find("lengths");
    if (lengths == j.end() || !lengths->is_array() || lengths->empty()) {
      return CalibrateLineError(path, line, "\"lengths\" must be a non-empty array");
    }
    plan::CostSample s;
    for (const nlohmann::json& l : *lengths) {
      if (!l.is_number_unsigned() || l.get<uint64_t>() < 1) {
        return CalibrateLineError(path, line,
                                  "\"lengths\" must hold whole numbers >= 1, got " + l.dump());
      }
      s.lengths.push_back(l.get<uint64_t>());
    }
    auto seconds = j.find("seconds");
    if (seconds == j.end() || !seconds->is_number()) {
      return CalibrateLineError(path, line, "\"seconds\" must be a number");
    }
    s.seconds = seconds->get<double>();
    if (!std::isfinite(s.seconds) || s.seconds <= 0) {
      return CalibrateLineError(path, line,
                                "\"seconds\" must be finite and > 0, got " + seconds->dump());
    }
    samples.push_back(std::move(s));
  }
  if (in.bad()) return InvalidArgument("cannot read " + path);
  return samples;
}

int RunCalibrateCommand(const std::string& path, bool json) {
  Result<std::vector<plan::CostSample>> samples = ReadCostSamples(path);
  if (!samples.ok()) return ReportError("bench", samples.status());
  double r2 = 0;
  Result<plan::CostModel> fit = plan::FitCostModel(*samples, &r2);
  if (!fit.ok()) return ReportError("bench", fit.status().WithContext(path));
  const std::string spec = CalibratedModelSpec(*fit);
  if (json) {
    nlohmann::json out = {{"a", fit->a},
                          {"b", fit->b},
                          {"c", fit->c},
                          {"r_squared", r2},
                          {"samples", samples->size()},
                          {"model_config", spec}};
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf("stoker bench --calibrate %s: %zu microbatches\n", path.c_str(), samples->size());
  std::printf("cost(L) = a*L + b*L^2 + c per document, in seconds\n");
  std::printf("a  %.6g s per token\nb  %.6g s per token pair\nc  %.6g s per document\n", fit->a,
              fit->b, fit->c);
  std::printf("R^2  %.4f\n", r2);
  if (fit->a > 0 && fit->b > 0) {
    std::printf("attention equals the linear work at L = a/b = %.0f tokens\n", fit->a / fit->b);
  }
  std::printf("--model-config %s\n", spec.c_str());
  return kExitOk;
}

}  // namespace stoker::cli
