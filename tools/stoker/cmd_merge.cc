// `stoker merge`: placeholder until the subcommand is implemented.
#include "stoker/cli_common.h"
#include "stoker/commands.h"

namespace stoker::cli {

void AddMergeCommand(CLI::App& app, int* exit_code) {
  auto* sub = app.add_subcommand("merge", "(not implemented yet)");
  sub->callback([exit_code] { *exit_code = ReportError("merge", Unimplemented("not implemented yet")); });
}

}  // namespace stoker::cli
