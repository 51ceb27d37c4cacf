#include "app.h"

#include "commands.h"

namespace stoker::cli {

void AddAllCommands(CLI::App& app, int* exit_code) {
  app.require_subcommand(1);
  app.set_version_flag("--version", "stoker 0.1.0");
  AddPackCommand(app, exit_code);
  AddMergeCommand(app, exit_code);
  AddInspectCommand(app, exit_code);
  AddVerifyCommand(app, exit_code);
  AddPlanCommand(app, exit_code);
  AddExplainCommand(app, exit_code);
  AddTraceCommand(app, exit_code);
  AddSummaryCommand(app, exit_code);
  AddResumeEditCommand(app, exit_code);
  AddIndexCommand(app, exit_code);
  AddScanCommand(app, exit_code);
  AddBenchCommand(app, exit_code);
  AddDoctorCommand(app, exit_code);
  AddTokenizeCommand(app, exit_code);
  AddRecordsCommand(app, exit_code);
  AddStorageCommand(app, exit_code);
  AddPrefetchCommand(app, exit_code);
  AddCacheCommand(app, exit_code);
}

}  // namespace stoker::cli
