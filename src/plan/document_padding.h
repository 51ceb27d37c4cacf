// The check of the per-document padding options (PlanOptions::pad_each_document_to,
// max_documents_per_row), shared by the plan and the stream's packer. Pure function.
#pragma once

#include "stoker/plan.h"
#include "stoker/status.h"

namespace stoker::plan {

// pad_each_document_to (> 1) needs pack bestfit or pad and a seq_len that is a multiple of it;
// max_documents_per_row (> 0) needs pack bestfit or pad. kInvalidArgument saying which, else OK.
Status CheckDocumentPadding(const PlanOptions& options);

}  // namespace stoker::plan
