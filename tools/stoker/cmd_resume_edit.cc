// `stoker resume-edit STATE --skip-steps A..B -o NEW_STATE`: a checkpoint edited to skip a stretch
// of steps on resume (after a loss spike; also --drop-source, --skip-documents): stoker.Loader,
// restoring NEW_STATE, serves the steps before A, jumps over A..B and serves the rest of the epoch
// after it (docs/plan.md, "Skipping steps on resume"; SkipStepsInState in src/plan/state_edit.h).
#include <cstdio>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "common/file_util.h"
#include "plan/state_edit.h"

namespace stoker::cli {
namespace {

struct ResumeEditArgs {
  std::string state_file, out_file;
  std::vector<std::string> skip_steps;
  std::vector<std::string> drop_sources;
  std::vector<std::string> skip_documents_files;
};

// The document ids of a --skip-documents file: one a line; blank lines and '#' comments skipped.
Result<std::vector<std::string>> ReadDocumentIds(const std::string& path) {
  STOKER_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  std::vector<std::string> ids;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    at = end + 1;
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    ids.push_back(line.substr(first, line.find_last_not_of(" \t\r") - first + 1));
  }
  if (ids.empty()) {
    return InvalidArgument("--skip-documents " + path +
                           ": no document id in it (one DATASET:SHARD:RECORD a line, as "
                           "`stoker trace` prints them)");
  }
  return ids;
}

// "A..B" (both included) -> (A, B).
Result<std::pair<uint64_t, uint64_t>> ParseStepRange(const std::string& text) {
  const size_t dots = text.find("..");
  auto number = [](const std::string& s, uint64_t* out) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 19) {
      return false;
    }
    *out = std::stoull(s);
    return true;
  };
  uint64_t a = 0, b = 0;
  if (dots == std::string::npos || !number(text.substr(0, dots), &a) ||
      !number(text.substr(dots + 2), &b)) {
    return InvalidArgument("--skip-steps " + text +
                           ": give FIRST..LAST, two step numbers (both included), e.g. "
                           "120400..120900");
  }
  return std::make_pair(a, b);
}

int RunResumeEdit(const ResumeEditArgs& args) {
  Result<std::string> text = ReadFileToString(args.state_file);
  if (!text.ok()) return ReportError("resume-edit", text.status());
  std::string state = std::move(text).value();
  for (const std::string& range : args.skip_steps) {
    Result<std::pair<uint64_t, uint64_t>> steps = ParseStepRange(range);
    if (!steps.ok()) return ReportError("resume-edit", steps.status());
    Result<std::string> edited = SkipStepsInState(state, steps->first, steps->second);
    if (!edited.ok()) {
      return ReportError("resume-edit",
                         edited.status().WithContext("state file " + args.state_file));
    }
    state = std::move(edited).value();
  }
  for (const std::string& name : args.drop_sources) {
    Result<std::string> edited = DropSourceInState(state, name);
    if (!edited.ok()) {
      return ReportError("resume-edit",
                         edited.status().WithContext("state file " + args.state_file));
    }
    state = std::move(edited).value();
  }
  for (const std::string& file : args.skip_documents_files) {
    Result<std::vector<std::string>> ids = ReadDocumentIds(file);
    if (!ids.ok()) return ReportError("resume-edit", ids.status());
    Result<std::string> edited = SkipDocumentsInState(state, *ids);
    if (!edited.ok()) {
      return ReportError("resume-edit", edited.status().WithContext("--skip-documents " + file));
    }
    state = std::move(edited).value();
  }
  if (args.skip_steps.empty() && args.drop_sources.empty() && args.skip_documents_files.empty()) {
    return ReportError("resume-edit",
                       InvalidArgument("nothing to edit: give --skip-steps A..B, --drop-source "
                                       "NAME or --skip-documents FILE"));
  }
  Status st = WriteFileAtomically(args.out_file, state + "\n");
  if (!st.ok()) return ReportError("resume-edit", st);
  std::string what;
  for (const std::string& r : args.skip_steps) what += (what.empty() ? "" : ", ") + ("steps " + r);
  for (const std::string& n : args.drop_sources)
    what += (what.empty() ? "" : ", ") + ("'" + n + "'");
  for (const std::string& f : args.skip_documents_files)
    what += (what.empty() ? "" : ", ") + ("the documents of " + f);
  std::printf("resume-edit: wrote %s (skips %s on resume)\n", args.out_file.c_str(), what.c_str());
  return kExitOk;
}

}  // namespace

void AddResumeEditCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ResumeEditArgs>();
  CLI::App* sub = app.add_subcommand(
      "resume-edit", "Edit a checkpoint's state before resuming: skip a stretch of steps");
  sub->footer(
      "STATE is a stoker.Loader state_dict() saved as JSON, or a `stoker plan --state` file.\n"
      "--skip-steps FIRST..LAST (both included; repeatable) counts steps of the state's epoch as\n"
      "the run that wrote it did (its world size and batch size). stoker.Loader, restoring\n"
      "NEW_STATE, serves every step before FIRST, never the skipped steps' rows, and the rest of\n"
      "the epoch once (docs/plan.md, \"Skipping steps on resume\").\n"
      "--drop-source NAME (a mixture's dataset, as its checkpoint names it) quarantines a whole\n"
      "source: the others continue their epochs exactly once, as when the mixture file drops it.\n"
      "--skip-documents FILE (one DATASET:SHARD:RECORD a line, as `stoker trace` prints them)\n"
      "quarantines single documents: never served after the resume; their pieces leave the rows\n"
      "that hold them, every other document is served as planned, exactly once.\n"
      "Exit status: 0 written, 2 error.");
  sub->add_option("STATE", args->state_file, "the checkpoint's state file")->required();
  sub->add_option("--skip-steps", args->skip_steps, "FIRST..LAST: steps to skip on resume");
  sub->add_option("--drop-source", args->drop_sources,
                  "NAME: a mixture's dataset to leave out from the checkpoint on (repeatable)");
  sub->add_option("--skip-documents", args->skip_documents_files,
                  "FILE: document ids to quarantine from the checkpoint on, one a line");
  sub->add_option("-o,--output", args->out_file, "the edited state file to write")->required();
  sub->callback([args, exit_code] { *exit_code = RunResumeEdit(*args); });
}

}  // namespace stoker::cli
