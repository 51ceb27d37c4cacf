// LoaderOptions' option table (common/option_table.h): PlanOptions' rows, then each field of
// LoaderOptions declared once, with its doc, CLI flag (tools/stoker/loader_flags.h registers the
// rows that have one) and Python keyword (stoker.Loader). Thread-safe: built once, immutable.
#pragma once

#include "common/option_table.h"
#include "stoker/loader.h"

namespace stoker {

const OptionTable<LoaderOptions>& LoaderOptionTable();

// The rows of LoaderOptions' own fields (LoaderOptionTable() without PlanOptions' rows).
size_t LoaderOwnOptionsBegin();

}  // namespace stoker
