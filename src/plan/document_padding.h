// The checks of the per-document padding options (PlanOptions::pad_each_document_to,
// max_documents_per_row), shared by the plan and the stream's packer, and by the token steps. Pure
// functions.
#pragma once

#include "stoker/plan.h"
#include "stoker/status.h"

namespace stoker::plan {

// pad_each_document_to (> 1) needs pack bestfit or pad and a seq_len that is a multiple of it;
// max_documents_per_row (> 0) needs pack bestfit or pad. kInvalidArgument saying which, else OK.
Status CheckDocumentPadding(const PlanOptions& options);

// The same for steps counted in tokens (tokens_per_step; token_steps.h): a piece's padded room
// must fit the microbatch budget (max_tokens_per_microbatch, else seq_len), so the budget must be
// a multiple of pad_each_document_to; both below 2^31. kInvalidArgument naming both, else OK.
Status CheckTokenStepPadding(const PlanOptions& options);

}  // namespace stoker::plan
