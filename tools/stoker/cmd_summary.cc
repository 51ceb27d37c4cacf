#include "commands.h"
namespace stoker::cli {
void AddSummaryCommand(CLI::App& app, int* exit_code) {}
}  // namespace stoker::cli
