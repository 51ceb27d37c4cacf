// `stoker index`: writes a stoker dataset's consolidated length index (for datasets packed before
// it existed, or by other tools) and records it in the manifest; --check verifies an existing one.
// `index --stream INPUT...` is the deprecated spelling of `stoker scan` (cmd_scan.cc).
#include <cstdio>
#include <string>

#include "cli_common.h"
#include "cmd_scan.h"
#include "commands.h"
#include "common/file_util.h"
#include "common/human_size.h"
#include "common/progress.h"
#include "common/uri.h"
#include "format/dataset_length_index.h"
#include "format/manifest.h"
#include "ingest/remote_tools.h"
#include "records/record_store.h"

namespace stoker::cli {
namespace {

constexpr const char* kDeprecated = "Deprecated: index --stream INPUT... is `stoker scan`";

struct IndexArgs {
  std::string dir;
  bool check = false;
};

int RunCheck(const std::string& dir, const Manifest& m) {
  if (!m.length_index) {
    std::fprintf(stderr, "stoker index: %s has no length index (`stoker index %s` writes one)\n",
                 dir.c_str(), dir.c_str());
    return kExitCheckFailed;
  }
  Result<std::shared_ptr<const LengthIndex>> index = OpenDatasetLengthIndex(dir, m);
  Status st = index.ok() ? (*index)->Verify() : index.status();
  if (!st.ok()) {
    std::fprintf(stderr, "stoker index: problem: %s\n", st.message().c_str());
    return kExitCheckFailed;
  }
  std::printf("index: ok: %s: %s documents, %s tokens\n", (*index)->path().c_str(),
              FormatCount((*index)->num_documents()).c_str(),
              FormatCount((*index)->header().total_tokens).c_str());
  return kExitOk;
}

int RunIndexRemote(const IndexArgs& args) {
  Result<LengthIndexInfo> info = IndexRemote(args.dir, args.check);
  if (!info.ok()) {
    if (args.check && info.status().code() != StatusCode::kInvalidArgument) {
      std::fprintf(stderr, "stoker index: problem: %s\n", info.status().message().c_str());
      return kExitCheckFailed;
    }
    return ReportError("index", info.status());
  }
  std::printf("index: %s %s: %s documents, %s\n", args.check ? "ok:" : "wrote",
              JoinUri(args.dir, info->file).c_str(), FormatCount(info->documents).c_str(),
              FormatSize(info->bytes).c_str());
  return kExitOk;
}

int RunIndex(const IndexArgs& given) {
  if (IsRemoteRecordUri(given.dir)) return RunIndexRemote(given);
  IndexArgs args = given;
  Result<std::string> local = LocalPathFromUri(given.dir);
  if (!local.ok()) return ReportError("index", local.status());
  args.dir = *local;
  if (!IsDirectory(args.dir) || !PathExists(JoinPath(args.dir, kManifestFileName))) {
    // Megatron files need none: the plan maps their .idx `sizes` array in place. And stoker
    // writes nothing beside files it did not write.
    return ReportError(
        "index",
        InvalidArgument(args.dir + ": not a stoker dataset directory (no manifest.json); a "
                                   "Megatron .idx needs no length index, the plan reads its "
                                   "sizes array in place"));
  }
  Result<Manifest> m = ReadManifest(args.dir);
  if (!m.ok()) return ReportError("index", m.status());
  if (args.check) return RunCheck(args.dir, *m);
  // The index file is renamed into place first and the manifest rewritten (atomically) after it:
  // a process killed in between leaves a manifest that does not name the new file, which is
  // therefore never read.
  Result<LengthIndexInfo> info = BuildDatasetLengthIndex(args.dir, *m);
  if (!info.ok()) return ReportError("index", info.status());
  m->length_index = *info;
  Status st = WriteManifest(args.dir, *m);
  if (!st.ok()) return ReportError("index", st);
  std::printf("index: wrote %s: %s documents, %s\n", JoinPath(args.dir, info->file).c_str(),
              FormatCount(info->documents).c_str(), FormatSize(info->bytes).c_str());
  return kExitOk;
}

}  // namespace

void AddIndexCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<IndexArgs>();
  auto stream_args = std::make_shared<ScanArgs>();
  auto stream = std::make_shared<bool>(false);
  auto* sub = app.add_subcommand(
      "index",
      "Write a stoker dataset's length index (every document's length in one file the plan maps "
      "and shares between processes) and record it in the manifest");
  sub->footer(
      "`stoker pack` and `stoker merge` write it; this adds it to datasets made before, or by "
      "other tools. The file is written under a temporary name and renamed, then the manifest is "
      "rewritten atomically. DATASET may be an s3:// prefix: its .idx files are read (the shards\n"
      "are listed, not read), and the index, then the manifest, are uploaded.\n"
      "Exit status: 0 written (or --check found no problem), 1 --check found a problem, 2 error.");
  sub->add_option("DATASET", args->dir, "stoker dataset directory")->required();
  sub->add_flag("--check", args->check,
                "Verify the existing index (checksum, totals, shards) instead of writing one");
  // Deprecated: `--stream INPUT...` with the flags of `stoker scan`, which it runs.
  sub->allow_extras();  // INPUT... under --stream
  sub->add_flag("--stream", *stream, "Deprecated: use `stoker scan INPUT...`")->group(kDeprecated);
  const size_t before = sub->get_options().size();
  AddScanFlags(sub, stream_args.get());
  sub->add_option("--cache-dir", stream_args->options.scan_cache_dir, "Deprecated: --scan-cache")
      ->group(kDeprecated);
  std::vector<const CLI::Option*> scan_flags;
  for (size_t i = before; i < sub->get_options().size(); ++i) {
    CLI::Option* opt = sub->get_options()[i];
    opt->group(kDeprecated);  // listed apart; not "", as hidden options lose their name in errors
    scan_flags.push_back(opt);
  }
  sub->callback([args, stream_args, stream, scan_flags, sub, exit_code] {
    std::vector<std::string> more = sub->remaining();
    for (const CLI::Option* opt : scan_flags) {
      if (!*stream && opt->count() > 0) {
        *exit_code = ReportError("index", InvalidArgument("--" + opt->get_lnames()[0] +
                                                          " is a flag of `stoker scan` (streamed "
                                                          "inputs), not of index"));
        return;
      }
    }
    if (*stream) {
      std::fprintf(stderr,
                   "stoker: warning: `stoker index --stream` is deprecated; use "
                   "`stoker scan` (same flags; --cache-dir is --scan-cache)\n");
      for (const std::string& in : more) {
        if (!in.empty() && in[0] == '-') {
          *exit_code = ReportError("index", InvalidArgument("unknown option " + in));
          return;
        }
      }
      more.insert(more.begin(), args->dir);
      stream_args->inputs = more;
      *exit_code = RunScan(*stream_args, "index");
    } else if (!more.empty()) {
      *exit_code = ReportError("index", InvalidArgument("unexpected argument " + more[0] +
                                                        " (one DATASET; streamed inputs: "
                                                        "`stoker scan INPUT...`)"));
    } else {
      *exit_code = RunIndex(*args);
    }
  });
}

}  // namespace stoker::cli
