// The cost of training on a document: cost(L) = a·L + b·L² + c, for a document of L tokens.
// a counts what grows with the tokens (the linear layers: attention projections, MLP, LM head),
// b what grows with the token pairs of causal attention, c a fixed cost per document (a kernel
// launch, say). Coefficients come from a model's config.json (training FLOPs, docs/plan.md
// "Balanced steps"), from explicit numbers, or from a fit of measured times (FitCostModel).
// Pure: no files (the caller reads config.json), no threads. Thread-safe (immutable values).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/status.h"

namespace stoker::plan {

struct CostModel {
  double a = 1.0;  // per token
  double b = 0.0;  // per token², i.e. per ordered pair of tokens of one document
  double c = 0.0;  // per document
  double Cost(uint64_t length) const {
    const double l = static_cast<double>(length);
    return a * l + b * l * l + c;
  }
};

// a, b and c must be finite and >= 0, not all 0 (else kInvalidArgument naming the bad one).
Status ValidateCostModel(const CostModel& model);

// What the FLOPs of a dense decoder-only transformer depend on, as a Hugging Face config.json
// spells it.
struct ModelShape {
  uint64_t hidden_size = 0;
  uint64_t intermediate_size = 0;
  uint64_t layers = 0;    // num_hidden_layers
  uint64_t heads = 0;     // num_attention_heads
  uint64_t kv_heads = 0;  // num_key_value_heads (default: heads)
  uint64_t head_dim = 0;  // head_dim (default: hidden_size / heads)
  uint64_t vocab_size = 0;
  bool gated_mlp = true;         // gate, up and down projections (SwiGLU/GeGLU) rather than two
  bool tied_embeddings = false;  // tie_word_embeddings: changes the parameters, not the FLOPs
};

// Reads a config.json's text (`name` is what error messages call it, e.g. its path). Dense
// decoders only: model_type must be one whose MLP this knows (gated: llama, mistral, qwen2,
// qwen3, gemma*, phi3, olmo*, granite, ...; ungated: gpt2, gpt_neox, gpt_bigcode, starcoder2,
// phi, opt, falcon, bloom); a mixture of experts, an unknown model_type or a missing size is
// kInvalidArgument naming the key and saying to pass explicit coefficients instead.
Result<ModelShape> ParseModelConfig(std::string_view config_json, const std::string& name);

// Training FLOPs (forward + backward = 3 × forward) of one document, as a·L + b·L²:
//   a = 3·(layers·(4·h·d·(n_q + n_kv) + m·h·I) + 2·h·V + 2·layers·n_q·d)
//   b = 3·(2·layers·n_q·d)
// with h hidden size, d head dim, n_q / n_kv heads, I intermediate size, m = 6 for a gated MLP
// (4 otherwise), V the vocabulary; c = 0. Derivation in docs/plan.md, "Balanced steps".
CostModel CostModelFromShape(const ModelShape& shape);

// ParseModelConfig then CostModelFromShape.
Result<CostModel> CostModelFromConfig(std::string_view config_json, const std::string& name);

// One measured microbatch: the lengths of its documents and the seconds it took.
struct CostSample {
  std::vector<uint64_t> lengths;
  double seconds = 0;
};

// The coefficients that best predict the samples' seconds as Σ (a·L + b·L² + c) by least squares
// (non-negative: a coefficient that would come out negative is held at 0 and the others refit).
// Needs at least 3 samples whose (Σ L, Σ L², documents) are not collinear, else
// kInvalidArgument. *r_squared (optional) gets the fit's coefficient of determination.
Result<CostModel> FitCostModel(const std::vector<CostSample>& samples, double* r_squared = nullptr);

}  // namespace stoker::plan
