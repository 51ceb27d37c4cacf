#include <string>

#include "plan/document_padding.h"

namespace stoker::plan {

Status CheckTokenStepPadding(const PlanOptions& o) {
  const uint64_t budget = o.max_tokens_per_microbatch > 0 ? o.max_tokens_per_microbatch : o.seq_len;
  if (o.max_documents_per_row >= (uint64_t{1} << 31)) {
    return InvalidArgument("tokens_per_step: max_documents_per_row must be below 2^31");
  }
  const uint64_t m = o.pad_each_document_to;
  if (m <= 1) return Status::OK();
  if (m >= (uint64_t{1} << 31)) {
    return InvalidArgument("tokens_per_step: pad_each_document_to=" + std::to_string(m) +
                           " must be below 2^31");
  }
  if (budget % m != 0) {
    return InvalidArgument(
        "tokens_per_step: max_tokens_per_microbatch=" + std::to_string(budget) +
        " must be a multiple of pad_each_document_to=" + std::to_string(m) +
        " (each document is padded to it inside a microbatch; context_parallel pads to 2 * "
        "cp_size): choose a max_tokens_per_microbatch that is a multiple of " +
        std::to_string(m));
  }
  return Status::OK();
}

}  // namespace stoker::plan
