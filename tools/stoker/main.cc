// stoker: the command-line tool. Subcommands live in one file each (see commands.h and app.cc).
#include <CLI/CLI.hpp>

#include "app.h"
#include "cli_common.h"

int main(int argc, char** argv) {
  CLI::App app{
      "stoker: a data pipeline that keeps the GPU fed.\n"
      "Pack raw text into token shards, plan and load batches, and measure the pipeline."};
  int exit_code = 0;
  stoker::cli::AddAllCommands(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : stoker::cli::kExitError;
  }
  return exit_code;
}
