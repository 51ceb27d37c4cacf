#include "plan/cost_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>

namespace stoker::plan {
namespace {

using ConfigJson = nlohmann::json;

// Model types whose MLP is gate·up then down (three matrices of h×I), and those with two (up,
// down). Anything else is refused rather than guessed.
constexpr std::array kGatedMlpModelTypes = {
    "llama",     "mistral", "qwen2",  "qwen3", "gemma",   "gemma2",  "gemma3_text",
    "phi3",      "olmo",    "olmo2",  "olmo3", "granite", "cohere",  "cohere2",
    "internlm2", "smollm3", "exaone", "glm",   "glm4",    "stablelm"};
constexpr std::array kUngatedMlpModelTypes = {"gpt2", "gpt_neox", "gpt_bigcode", "starcoder2",
                                              "phi",  "opt",      "falcon",      "bloom",
                                              "gptj", "codegen"};

template <size_t N>
bool ContainsModelType(const std::array<const char*, N>& types, const std::string& t) {
  return std::any_of(types.begin(), types.end(), [&](const char* x) { return t == x; });
}

// The first of `keys` present in `config`, as a positive integer; 0 when none is present.
Result<uint64_t> PositiveSize(const ConfigJson& config, std::initializer_list<const char*> keys,
                              const std::string& name) {
  for (const char* key : keys) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() <= 0) {
      return InvalidArgument(name + ": '" + key + "' must be a positive integer, not " +
                             it->dump());
    }
    return it->get<uint64_t>();
  }
  return uint64_t{0};
}

Result<uint64_t> RequiredSize(const ConfigJson& config, std::initializer_list<const char*> keys,
                              const std::string& name) {
  STOKER_ASSIGN_OR_RETURN(uint64_t v, PositiveSize(config, keys, name));
  if (v == 0) {
    return InvalidArgument(name + ": no '" + *keys.begin() +
                           "': not a dense decoder's config.json the cost model can read; give "
                           "the cost as explicit numbers (a, b) instead");
  }
  return v;
}

}  // namespace

Status ValidateCostModel(const CostModel& m) {
  const std::array<std::pair<const char*, double>, 3> coefficients = {
      {{"a", m.a}, {"b", m.b}, {"c", m.c}}};
  for (const auto& [what, v] : coefficients) {
    if (!std::isfinite(v) || v < 0) {
      return InvalidArgument("cost model: '" + std::string(what) +
                             "' must be a finite number >= 0, not " + std::to_string(v));
    }
  }
  if (m.a == 0 && m.b == 0 && m.c == 0) {
    return InvalidArgument("cost model: a, b and c are all 0; every document would cost nothing");
  }
  return Status::OK();
}

Result<ModelShape> ParseModelConfig(std::string_view config_json, const std::string& name) {
  ConfigJson config = ConfigJson::parse(config_json, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded() || !config.is_object()) {
    return InvalidArgument(name + ": not a JSON object (expected a model's config.json)");
  }
  for (const char* moe : {"num_experts", "num_local_experts", "n_routed_experts"}) {
    if (config.contains(moe)) {
      return InvalidArgument(name + ": a mixture of experts ('" + std::string(moe) +
                             "'): the cost model knows dense decoders only; give the cost as "
                             "explicit numbers (a, b) instead");
    }
  }
  if (!config.contains("hidden_size") && config.contains("text_config")) {
    return InvalidArgument(name +
                           ": the model's sizes are under 'text_config' (a multimodal "
                           "config); pass that object's JSON, or explicit numbers (a, b)");
  }
  const auto type_it = config.find("model_type");
  const std::string type = type_it != config.end() && type_it->is_string() ? *type_it : "";
  ModelShape s;
  if (ContainsModelType(kGatedMlpModelTypes, type)) {
    s.gated_mlp = true;
  } else if (ContainsModelType(kUngatedMlpModelTypes, type)) {
    s.gated_mlp = false;
  } else {
    return InvalidArgument(name + ": model_type '" + type +
                           "' is not one whose MLP the cost model knows (docs/plan.md, "
                           "\"Balanced steps\"); give the cost as explicit numbers (a, b) instead");
  }
  STOKER_ASSIGN_OR_RETURN(s.hidden_size, RequiredSize(config, {"hidden_size", "n_embd"}, name));
  STOKER_ASSIGN_OR_RETURN(s.layers, RequiredSize(config, {"num_hidden_layers", "n_layer"}, name));
  STOKER_ASSIGN_OR_RETURN(s.heads, RequiredSize(config, {"num_attention_heads", "n_head"}, name));
  STOKER_ASSIGN_OR_RETURN(s.vocab_size, RequiredSize(config, {"vocab_size"}, name));
  STOKER_ASSIGN_OR_RETURN(s.intermediate_size,
                          PositiveSize(config, {"intermediate_size", "n_inner", "ffn_dim"}, name));
  if (s.intermediate_size == 0) {
    if (s.gated_mlp) {
      return InvalidArgument(name +
                             ": no 'intermediate_size'; give the cost as explicit "
                             "numbers (a, b) instead");
    }
    s.intermediate_size = 4 * s.hidden_size;  // GPT-2's n_inner: null means 4·n_embd
  }
  STOKER_ASSIGN_OR_RETURN(s.kv_heads, PositiveSize(config, {"num_key_value_heads"}, name));
  const auto multi_query = config.find("multi_query");  // gpt_bigcode: one K/V head
  if (s.kv_heads == 0 && multi_query != config.end() && multi_query->is_boolean() &&
      multi_query->get<bool>()) {
    s.kv_heads = 1;
  }
  if (s.kv_heads == 0) s.kv_heads = s.heads;
  STOKER_ASSIGN_OR_RETURN(s.head_dim, PositiveSize(config, {"head_dim"}, name));
  if (s.head_dim == 0) {
    if (s.hidden_size % s.heads != 0) {
      return InvalidArgument(name + ": no 'head_dim' and hidden_size " +
                             std::to_string(s.hidden_size) + " is not a multiple of " +
                             std::to_string(s.heads) + " heads");
    }
    s.head_dim = s.hidden_size / s.heads;
  }
  const auto tie = config.find("tie_word_embeddings");
  s.tied_embeddings = tie != config.end() && tie->is_boolean() && tie->get<bool>();
  return s;
}

CostModel CostModelFromShape(const ModelShape& s) {
  const double h = static_cast<double>(s.hidden_size);
  const double d = static_cast<double>(s.head_dim);
  const double nq = static_cast<double>(s.heads);
  const double nkv = static_cast<double>(s.kv_heads);
  const double layers = static_cast<double>(s.layers);
  const double mlp_matrices = s.gated_mlp ? 3.0 : 2.0;
  // Forward FLOPs per token: 2 per multiply-add of each weight it meets.
  const double projections = 2.0 * h * d * (2.0 * nq + 2.0 * nkv);  // Q, O: h·n_q·d; K, V: h·n_kv·d
  const double mlp = 2.0 * mlp_matrices * h * static_cast<double>(s.intermediate_size);
  const double lm_head = 2.0 * h * static_cast<double>(s.vocab_size);  // tied or not
  // Causal attention: query i meets keys 0..i, L(L+1)/2 pairs; per pair and head QKᵀ and PV
  // cost 2·d each: 4·d·n_q per pair per layer, so 2·n_q·d·layers·(L² + L).
  const double pair = 2.0 * nq * d * layers;
  CostModel m;
  m.a = 3.0 * (layers * (projections + mlp) + lm_head + pair);
  m.b = 3.0 * pair;
  m.c = 0.0;
  return m;
}

namespace {

// Least squares of y on the columns of x that `use` selects, by the normal equations after
// scaling each column to unit RMS. False when they are singular.
bool SolveCostLeastSquares(const std::vector<std::array<double, 3>>& x,
                           const std::vector<double>& y, const std::array<bool, 3>& use,
                           std::array<double, 3>* coef) {
  std::array<double, 3> scale{};
  for (const auto& row : x) {
    for (int j = 0; j < 3; ++j) scale[j] += row[j] * row[j];
  }
  std::vector<int> cols;
  for (int j = 0; j < 3; ++j) {
    if (use[j] && scale[j] > 0) cols.push_back(j);
    scale[j] = scale[j] > 0 ? std::sqrt(scale[j] / static_cast<double>(x.size())) : 1.0;
  }
  const size_t k = cols.size();
  if (k == 0) return false;
  double m[3][4] = {};
  for (size_t r = 0; r < x.size(); ++r) {
    for (size_t i = 0; i < k; ++i) {
      const double xi = x[r][cols[i]] / scale[cols[i]];
      for (size_t j = 0; j < k; ++j) m[i][j] += xi * x[r][cols[j]] / scale[cols[j]];
      m[i][k] += xi * y[r];
    }
  }
  // Gaussian elimination with partial pivoting on the k×(k+1) system.
  for (size_t i = 0; i < k; ++i) {
    size_t pivot = i;
    for (size_t r = i + 1; r < k; ++r) {
      if (std::abs(m[r][i]) > std::abs(m[pivot][i])) pivot = r;
    }
    if (std::abs(m[pivot][i]) < 1e-9 * static_cast<double>(x.size())) return false;
    std::swap(m[i], m[pivot]);
    for (size_t r = 0; r < k; ++r) {
      if (r == i) continue;
      const double f = m[r][i] / m[i][i];
      for (size_t j = i; j <= k; ++j) m[r][j] -= f * m[i][j];
    }
  }
  *coef = {0, 0, 0};
  for (size_t i = 0; i < k; ++i) (*coef)[cols[i]] = m[i][k] / m[i][i] / scale[cols[i]];
  return true;
}

}  // namespace

Result<CostModel> FitCostModel(const std::vector<CostSample>& samples, double* r_squared) {
  if (samples.size() < 3) {
    return InvalidArgument("cost model fit: " + std::to_string(samples.size()) +
                           " samples; at least 3 microbatches of different length mixes needed");
  }
  std::vector<std::array<double, 3>> x;
  std::vector<double> y;
  for (const CostSample& s : samples) {
    if (!std::isfinite(s.seconds) || s.seconds < 0) {
      return InvalidArgument("cost model fit: a sample's seconds must be finite and >= 0");
    }
    std::array<double, 3> row{0, 0, static_cast<double>(s.lengths.size())};
    for (uint64_t l : s.lengths) {
      row[0] += static_cast<double>(l);
      row[1] += static_cast<double>(l) * static_cast<double>(l);
    }
    x.push_back(row);
    y.push_back(s.seconds);
  }
  // Exact non-negative least squares for three unknowns: the best feasible fit over every
  // subset of the columns.
  double best_sse = -1;
  std::array<double, 3> best{};
  for (int subset = 7; subset >= 1; --subset) {
    const std::array<bool, 3> use = {(subset & 1) != 0, (subset & 2) != 0, (subset & 4) != 0};
    std::array<double, 3> coef{};
    if (!SolveCostLeastSquares(x, y, use, &coef)) continue;
    if (std::any_of(coef.begin(), coef.end(), [](double c) { return c < 0; })) continue;
    double sse = 0;
    for (size_t r = 0; r < x.size(); ++r) {
      const double e = y[r] - (coef[0] * x[r][0] + coef[1] * x[r][1] + coef[2] * x[r][2]);
      sse += e * e;
    }
    if (best_sse < 0 || sse < best_sse) {
      best_sse = sse;
      best = coef;
    }
  }
  if (best_sse < 0 || (best[0] == 0 && best[1] == 0 && best[2] == 0)) {
    return InvalidArgument(
        "cost model fit: the samples do not determine a, b and c (their "
        "token counts, squared lengths and document counts are collinear or "
        "zero); measure microbatches of different length mixes");
  }
  if (r_squared != nullptr) {
    double mean = 0;
    for (double v : y) mean += v / static_cast<double>(y.size());
    double sst = 0;
    for (double v : y) sst += (v - mean) * (v - mean);
    *r_squared = sst > 0 ? 1.0 - best_sse / sst : 1.0;
  }
  return CostModel{best[0], best[1], best[2]};
}

Result<CostModel> CostModelFromConfig(std::string_view config_json, const std::string& name) {
  STOKER_ASSIGN_OR_RETURN(ModelShape shape, ParseModelConfig(config_json, name));
  return CostModelFromShape(shape);
}

}  // namespace stoker::plan
