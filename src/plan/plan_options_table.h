// PlanOptions' option table (common/option_table.h): each field of PlanOptions declared once,
// with its doc, CLI flag (plan_flags.h), Python keyword, and whether a plan's state keeps it in
// its options text (InState: the options that shape the rows, plan::StreamOptionsText).
// LoaderOptions' table starts with these rows (loader/loader_options_table.h).
// Thread-safe: built once, immutable.
#pragma once

#include "common/option_table.h"
#include "stoker/plan.h"

namespace stoker {

const OptionTable<PlanOptions>& PlanOptionTable();

}  // namespace stoker
