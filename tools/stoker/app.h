// The stoker CLI as one CLI11 app: every subcommand registered, so main() and the tests that
// walk all subcommands (cli_test.cc) see the same command line. Not thread-safe.
#pragma once

#include <CLI/CLI.hpp>

namespace stoker::cli {

// Registers every subcommand on `app`; the one that runs stores its exit code in *exit_code.
void AddAllCommands(CLI::App& app, int* exit_code);

}  // namespace stoker::cli
