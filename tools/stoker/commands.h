// Subcommands of the stoker CLI. Each Add*Command registers one subcommand on `app`; when it runs,
// it stores its process exit code in *exit_code (0 success, 1 a check failed, 2 an error).
#pragma once

#include <CLI/CLI.hpp>

namespace stoker::cli {

void AddPackCommand(CLI::App& app, int* exit_code);
void AddMergeCommand(CLI::App& app, int* exit_code);
void AddInspectCommand(CLI::App& app, int* exit_code);
void AddVerifyCommand(CLI::App& app, int* exit_code);
void AddPlanCommand(CLI::App& app, int* exit_code);
void AddIndexCommand(CLI::App& app, int* exit_code);
void AddBenchCommand(CLI::App& app, int* exit_code);
void AddDoctorCommand(CLI::App& app, int* exit_code);
void AddTokenizeCommand(CLI::App& app, int* exit_code);
void AddRecordsCommand(CLI::App& app, int* exit_code);
void AddStorageCommand(CLI::App& app, int* exit_code);
void AddPrefetchCommand(CLI::App& app, int* exit_code);
void AddCacheCommand(CLI::App& app, int* exit_code);
void AddExplainCommand(CLI::App& app, int* exit_code);
void AddScanCommand(CLI::App& app, int* exit_code);
void AddTraceCommand(CLI::App& app, int* exit_code);
void AddSummaryCommand(CLI::App& app, int* exit_code);
void AddResumeEditCommand(CLI::App& app, int* exit_code);

}  // namespace stoker::cli
