#include "loader/mixture_spec.h"

#include <optional>

#include "common/file_util.h"

namespace stoker {

Result<MixtureSpec> ReadMixtureSpec(const std::string& path, uint64_t seq_len,
                                    uint64_t global_batch_rows, const plan::RunLength& run) {
  Result<std::string> text = ReadFileToString(path);
  if (!text.ok()) return text.status().WithContext("mixture file " + path);
  STOKER_ASSIGN_OR_RETURN(plan::MixtureFile file, plan::ParseMixtureFile(*text, path));
  MixtureSpec spec;
  spec.file = path;
  spec.names = file.names;
  spec.paths = file.paths;
  STOKER_ASSIGN_OR_RETURN(spec.phases, plan::ResolvePhases(file, seq_len, global_batch_rows, run));
  spec.run_rows = plan::RunRows(run, seq_len, global_batch_rows);
  STOKER_ASSIGN_OR_RETURN(spec.tokens_per_step_schedule,
                          plan::ResolveStepTokens(file, seq_len, global_batch_rows, run));
  if (spec.phases.empty()) {
    spec.weights = file.phases[0].weights;
    for (size_t k = 0; k < spec.weights.size(); ++k) {
      if (!(spec.weights[k] > 0)) {
        return InvalidArgument(path + ": weights: '" + spec.names[k] +
                               "' has weight 0: leave it out of 'datasets' instead");
      }
    }
  } else {
    spec.weights.assign(spec.names.size(), 1.0);
  }
  return spec;
}

Status CheckSameTokenizer(const std::vector<std::shared_ptr<const TokenSource>>& sources,
                          const std::vector<std::string>& names) {
  std::optional<TokenizerInfo> first;
  size_t first_index = 0;
  for (size_t k = 0; k < sources.size(); ++k) {
    std::optional<TokenizerInfo> info = sources[k]->tokenizer_info();
    if (!info) continue;
    if (!first) {
      first = info;
      first_index = k;
      continue;
    }
    if (info->kind != first->kind || info->vocab_size != first->vocab_size ||
        info->checksum != first->checksum) {
      auto describe = [](const TokenizerInfo& t) {
        return t.kind + (t.name.empty() ? "" : " '" + t.name + "'") + ", vocabulary " +
               std::to_string(t.vocab_size);
      };
      return InvalidArgument("datasets '" + names[first_index] + "' and '" + names[k] +
                             "' were tokenized differently (" + describe(*first) + " vs " +
                             describe(*info) + "): a mixture needs one tokenizer");
    }
  }
  return Status::OK();
}

}  // namespace stoker
