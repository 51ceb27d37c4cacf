// `stoker plan`: placeholder until the subcommand is implemented.
#include "stoker/cli_common.h"
#include "stoker/commands.h"

namespace stoker::cli {

void AddPlanCommand(CLI::App& app, int* exit_code) {
  auto* sub = app.add_subcommand("plan", "(not implemented yet)");
  sub->callback([exit_code] { *exit_code = ReportError("plan", Unimplemented("not implemented yet")); });
}

}  // namespace stoker::cli
