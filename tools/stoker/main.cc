// stoker: the command-line tool. Subcommands live in one file each (see commands.h).
#include <CLI/CLI.hpp>

#include "stoker/cli_common.h"
#include "stoker/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "stoker: a data pipeline that keeps the GPU fed.\n"
      "Pack raw text into token shards, plan and load batches, and measure the pipeline."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "stoker 0.1.0");
  int exit_code = 0;
  stoker::cli::AddPackCommand(app, &exit_code);
  stoker::cli::AddMergeCommand(app, &exit_code);
  stoker::cli::AddInspectCommand(app, &exit_code);
  stoker::cli::AddVerifyCommand(app, &exit_code);
  stoker::cli::AddPlanCommand(app, &exit_code);
  stoker::cli::AddIndexCommand(app, &exit_code);
  stoker::cli::AddBenchCommand(app, &exit_code);
  stoker::cli::AddDoctorCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : stoker::cli::kExitError;
  }
  return exit_code;
}
