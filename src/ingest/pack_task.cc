#include "ingest/pack_task.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "common/file_util.h"
#include "common/hash.h"
#include "common/temp_dir.h"
#include "common/uri.h"
#include "format/length_index.h"
#include "ingest/chat_inputs.h"
#include "ingest/dataset_dir.h"
#include "ingest/pack_records.h"
#include "ingest/shard_sink.h"
#include "ingest/task_receipt.h"
#include "ingest/upload_dataset.h"
#include "records/record_store.h"
#include "storage/open_backend.h"
#include "text/tokenizer.h"

namespace stoker {
namespace {

// The tokenizer and every option that changes the output bytes (not --threads).
std::string OptionsJson(const PackArgs& args, const PackOptions& o, const Tokenizer& tokenizer,
                        TokenDType dtype) {
  nlohmann::ordered_json j;
  const TokenizerIdentity& id = tokenizer.identity();
  j["format"] = args.format;
  j["tokenizer"] = {{"kind", id.kind},
                    {"name", id.name},
                    {"vocab_size", tokenizer.vocab_size()},
                    {"eos_id", tokenizer.eos_id()},
                    {"checksum", id.checksum}};
  j["dtype"] = std::string(TokenDTypeName(dtype));
  j["text_field"] = args.text_field;
  j["key_field"] = args.key_field;
  j["input_format"] = args.input_format;
  j["utf8"] = args.utf8;
  j["on_error"] = args.on_error;
  j["shard_size_bytes"] = o.shard_size_bytes;
  return j.dump();
}

// --format webdataset: no tokenizer; the shard size decides the output.
std::string WebDatasetOptionsJson(const PackOptions& o) {
  nlohmann::ordered_json j;
  j["format"] = "webdataset";
  j["shard_size_bytes"] = o.shard_size_bytes;
  return j.dump();
}

std::string ShardPrefix(uint32_t task_index) {
  std::string name = ShardSink::ShardName(task_index, 0);
  return name.substr(0, name.size() - 5);  // "part-00003-"
}

// True when every shard of `r` is at `root` with the size the receipt records.
Result<bool> ShardsPresent(const storage::Backend& backend, const std::string& root,
                           const TaskReceipt& r) {
  STOKER_ASSIGN_OR_RETURN(std::vector<storage::ObjectInfo> objects,
                          backend.List(JoinUri(root, ShardPrefix(r.task_index))));
  std::map<std::string, uint64_t> sizes;
  for (const storage::ObjectInfo& o : objects) sizes[o.uri] = o.size_bytes;
  // Whether root/`rel` was listed with `bytes`.
  auto has = [&](const std::string& rel, uint64_t bytes) {
    auto it = sizes.find(JoinUri(root, rel));
    return it != sizes.end() && it->second == bytes;
  };
  for (const ShardInfo& s : r.manifest.shards) {
    if (!has(s.prefix + ".bin", s.bin_bytes) || !has(s.prefix + ".idx", s.idx_bytes)) return false;
  }
  for (const RecordFileInfo& f : r.webdataset) {
    if (!has(f.name, f.size_bytes)) return false;
  }
  if (r.tfrecord.empty()) return true;
  STOKER_ASSIGN_OR_RETURN(objects,
                          backend.List(JoinUri(root, "tfrecord/" + ShardPrefix(r.task_index))));
  for (const storage::ObjectInfo& o : objects) sizes[o.uri] = o.size_bytes;
  for (const RecordFileInfo& f : r.tfrecord) {
    if (!has("tfrecord/" + f.name, f.size_bytes)) return false;
  }
  return true;
}

// Local output: removes the receipt (first: from here on the task is not finished), the merged
// manifest and length index (the dataset is no longer complete), then this task's shards and
// temporary files.
Status ForgetLocalTask(const std::string& root, uint32_t task_index) {
  for (std::string path : {TaskReceiptUri(root, task_index), JoinPath(root, kManifestFileName),
                           JoinPath(root, std::string(kLengthIndexFileName)),
                           JoinPath(JoinPath(root, "tfrecord"), kRecordsManifestName),
                           JoinPath(root, kRecordsManifestName)}) {
    STOKER_RETURN_IF_ERROR(RemoveFileIfPresent(path));
  }
  const std::string prefix = ShardPrefix(task_index);
  for (const std::string& dir : {root, JoinPath(root, "tfrecord")}) {
    if (!IsDirectory(dir)) continue;
    STOKER_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectory(dir));
    for (const std::string& name : names) {
      if (!name.starts_with(prefix)) continue;
      STOKER_RETURN_IF_ERROR(RemoveFileIfPresent(JoinPath(dir, name)));
    }
  }
  return Status::OK();
}

// The job-level files a finished dataset has (the merge writes them): a task that is redone
// removes them, since the dataset is no longer complete.
std::vector<std::string> MergedFiles(const std::string& root) {
  return {JoinUri(root, kManifestFileName), JoinUri(root, kRecordsManifestName),
          JoinUri(root, std::string(kLengthIndexFileName)),
          JoinUri(root, std::string("tfrecord/") + kRecordsManifestName)};
}

// s3:// output, before the task is redone: removes its receipt (first, if it had one), then the
// merged files if the job was merged (one HEAD of the file the merge writes last, so that the
// first run of a task costs one request here, not a DELETE per name).
Status ForgetRemoteTask(const storage::Backend& backend, const std::string& root,
                        uint32_t task_index, bool had_receipt, bool webdataset) {
  if (had_receipt) STOKER_RETURN_IF_ERROR(backend.Delete(TaskReceiptUri(root, task_index)));
  Result<storage::ObjectInfo> merged = backend.Stat(JoinUri(
      root, webdataset ? std::string(kRecordsManifestName) : std::string(kManifestFileName)));
  if (!merged.ok() && merged.status().code() != StatusCode::kNotFound) return merged.status();
  if (!merged.ok()) return Status::OK();
  for (const std::string& uri : MergedFiles(root)) STOKER_RETURN_IF_ERROR(backend.Delete(uri));
  return Status::OK();
}

// s3:// output, after the task's files are uploaded and before its receipt: deletes the objects
// under the task's names that this attempt did not write. Names are deterministic (task index,
// sequence number), so a rerun with the same plan and options overwrites an earlier attempt's
// objects; these are the extra ones an attempt with other options (another --shard-size) left.
Status DeleteOrphans(const storage::Backend& backend, const std::string& root, uint32_t task_index,
                     const std::vector<std::string>& written, bool tfrecord) {
  std::set<std::string> keep;
  for (const std::string& f : written) keep.insert(JoinUri(root, f));
  for (const std::string& dir : {std::string(), std::string("tfrecord/")}) {
    if (!dir.empty() && !tfrecord) continue;
    STOKER_ASSIGN_OR_RETURN(std::vector<storage::ObjectInfo> objects,
                            backend.List(JoinUri(root, dir + ShardPrefix(task_index))));
    for (const storage::ObjectInfo& o : objects) {
      if (!keep.count(o.uri)) STOKER_RETURN_IF_ERROR(backend.Delete(o.uri));
    }
  }
  return Status::OK();
}

// Tests only: STOKER_TEST_PLAN_LISTED=FIFO makes the task that lists the inputs (no plan was
// recorded) wait, after listing and before recording its list, until the test has written to
// and closed FIFO: the test then knows this task listed, and can let another task record first.
void MaybeWaitAfterListingForTest() {
  const char* fifo = std::getenv("STOKER_TEST_PLAN_LISTED");
  if (fifo == nullptr) return;
  std::FILE* f = std::fopen(fifo, "r");  // blocks until the test opens it for writing
  if (f == nullptr) return;
  while (std::fgetc(f) != EOF) {
  }
  std::fclose(f);
}

// Tests only: STOKER_TEST_KILL_TASK=INDEX:MARKER kills this process with SIGKILL before task
// INDEX writes its receipt, once (the marker file records that it happened), as a preempted or
// lost worker would die.
void MaybeKillForTest(uint32_t task_index) {
  const char* spec = std::getenv("STOKER_TEST_KILL_TASK");
  if (spec == nullptr) return;
  std::string s(spec);
  size_t colon = s.find(':');
  if (colon == std::string::npos || s.substr(0, colon) != std::to_string(task_index)) return;
  const std::string marker = s.substr(colon + 1);
  if (PathExists(marker)) return;
  if (!WriteFileAtomically(marker, "killed\n").ok()) return;
  ::kill(::getpid(), SIGKILL);
}

// A finished webdataset task's result, from its receipt.
RecordPackResult WebDatasetSummary(const TaskReceipt& r, const std::string& root) {
  RecordPackResult done = SummarizeRecordFiles(r.webdataset, root);
  auto counter = [&](const char* name) {
    auto it = r.manifest.counters.find(name);
    return it == r.manifest.counters.end() ? uint64_t{0} : static_cast<uint64_t>(it->second);
  };
  done.files_read = counter("files_read");
  done.files_skipped = counter("files_skipped");
  return done;
}

Result<std::vector<ReceiptInput>> HashInputs(const TaskPlan& plan, TaskSlice slice) {
  std::vector<ReceiptInput> inputs;
  for (size_t i = slice.first; i < slice.last; ++i) {
    const PlannedInput& f = plan.files[i];
    ReceiptInput in{f.key, f.size_bytes, ""};
    if (!IsRemoteRecordUri(f.key) && f.key.find('#') == std::string::npos && PathExists(f.key) &&
        !IsDirectory(f.key)) {
      STOKER_ASSIGN_OR_RETURN(in.xxh3, Xxh3HexOfFile(f.key));
    }
    inputs.push_back(std::move(in));
  }
  return inputs;
}

}  // namespace

Result<bool> IsTaskSplit(const PackArgs& args) {
  STOKER_ASSIGN_OR_RETURN(TaskAssignment task, ResolveTask(args));
  return task.count > 1;
}

Result<TaskPlan> PlanPackTasks(const PackArgs& args) {
  STOKER_ASSIGN_OR_RETURN(TaskAssignment task, ResolveTask(args));
  PackArgs local = args;
  local.output = ".";
  STOKER_ASSIGN_OR_RETURN(PackOptions o, PackOptionsFromArgs(local));
  STOKER_ASSIGN_OR_RETURN(std::string root, TaskOutputRoot(args.output));
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<storage::Backend> backend,
                          storage::OpenBackendForUri(root));
  TaskPlan want;
  want.task_count = task.count;
  want.arguments = args.inputs;
  want.input_format = args.input_format;
  STOKER_ASSIGN_OR_RETURN(PackFormat format, ParsePackFormat(args.format));
  if (format == PackFormat::kWebDataset) want.output_format = "webdataset";
  return ReadOrWriteTaskPlan(*backend, root, want, [&]() -> Result<std::vector<PlannedInput>> {
    // A new job: not over a dataset that is already there, nor inside the inputs.
    for (std::string name : {std::string(kManifestFileName), std::string(kRecordsManifestName)}) {
      Result<storage::ObjectInfo> dataset = backend->Stat(JoinUri(root, name));
      if (dataset.ok()) {
        return AlreadyExists(JoinUri(root, name) + ": a dataset is already there, and no task " +
                             "plan (" + kTaskPlanFileName + "); write the job to another output");
      }
    }
    if (!IsRemoteRecordUri(root)) {
      STOKER_RETURN_IF_ERROR(CheckOutputOutsideInputs(root, o.inputs));
    }
    if (format == PackFormat::kWebDataset) {
      // The input files themselves, each with its tar member name.
      STOKER_ASSIGN_OR_RETURN(std::vector<WebDatasetMember> members,
                              ListWebDatasetMembers(o.inputs));
      std::vector<PlannedInput> planned;
      for (WebDatasetMember& m : members) {
        PlannedInput p;
        p.key = std::move(m.path);
        p.size_bytes = m.size_bytes;
        p.member = std::move(m.name);
        planned.push_back(std::move(p));
      }
      return planned;
    }
    STOKER_ASSIGN_OR_RETURN(std::vector<InputFile> files,
                            ExpandPackInputs(o.inputs, o.input_format));
    if (files.empty()) {
      return InvalidArgument(
          "no input files: the inputs are empty directories (hidden "
          "files are ignored)");
    }
    std::vector<PlannedInput> planned = PlanFiles(files);
    MaybeWaitAfterListingForTest();
    return planned;
  });
}

Result<PackRunResult> RunPackTask(const PackArgs& args,
                                  std::function<void(const PackProgress&)> on_progress) {
  PackRunResult run;
  STOKER_ASSIGN_OR_RETURN(run.format, ParsePackFormat(args.format));
  const bool webdataset = run.format == PackFormat::kWebDataset;
  STOKER_ASSIGN_OR_RETURN(std::string root, TaskOutputRoot(args.output));
  const bool remote = IsRemoteRecordUri(root);
  PackArgs local = args;
  local.output = ".";
  STOKER_ASSIGN_OR_RETURN(run.options, PackOptionsFromArgs(local));
  PackOptions& o = run.options;
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<storage::Backend> backend,
                          storage::OpenBackendForUri(root));
  std::unique_ptr<Tokenizer> tokenizer;  // none for webdataset: the files are copied
  std::string options_json = WebDatasetOptionsJson(o);
  if (!webdataset) {
    TokenizerOptions tokenizer_options = args.tokenizer_options;
    tokenizer_options.load_threads = o.threads;
    STOKER_ASSIGN_OR_RETURN(tokenizer, OpenPackTokenizer(args, o, tokenizer_options));
    STOKER_ASSIGN_OR_RETURN(TokenDType dtype, ChooseDType(*tokenizer, o.dtype));
    options_json = OptionsJson(args, o, *tokenizer, dtype);
  }
  STOKER_ASSIGN_OR_RETURN(TaskPlan plan, PlanPackTasks(args));
  run.receipt = TaskReceiptUri(root, o.task_index);
  run.output = root;

  Result<std::string> existing = storage::ReadAll(*backend, run.receipt);
  if (!existing.ok() && existing.status().code() != StatusCode::kNotFound) {
    return existing.status();
  }
  if (existing.ok()) {
    Result<TaskReceipt> r = TaskReceipt::Parse(*existing, run.receipt);
    // An unreadable receipt, or one from another plan, is stale: the task is redone.
    if (r.ok() && r->plan_checksum == plan.checksum && !args.overwrite) {
      if (r->options_json != options_json) {
        return FailedPrecondition(
            run.receipt + ": task " + std::to_string(o.task_index) +
            " was packed with other options: " +
            ReceiptOptionsThatDiffer(r->options_json, "its receipt", options_json, "this run") +
            "; --overwrite redoes it");
      }
      STOKER_ASSIGN_OR_RETURN(bool present, ShardsPresent(*backend, root, *r));
      if (present && webdataset) {
        run.skipped = true;
        run.records = WebDatasetSummary(*r, root);
        return run;
      }
      if (present) {
        run.skipped = true;
        PackResult done;
        done.manifest = std::move(r->manifest);
        done.counters.documents = done.manifest.total_documents();
        const TaskSlice slice = plan.Slice(o.task_index);
        done.input_files = slice.last - slice.first;
        done.total_files = plan.files.size();
        run.pack = std::move(done);
        return run;
      }
    }
  }

  // Redo the task. Locally, first make sure nothing of an earlier attempt can pass for finished.
  std::unique_ptr<TempDir> staging;
  if (remote) {
    STOKER_RETURN_IF_ERROR(
        ForgetRemoteTask(*backend, root, o.task_index, existing.ok(), webdataset));
    STOKER_ASSIGN_OR_RETURN(staging, TempDir::Create("stoker-task-"));
    o.output_dir = staging->Join("task");
  } else {
    STOKER_RETURN_IF_ERROR(ForgetLocalTask(root, o.task_index));
    o.output_dir = root;
  }
  TaskReceipt receipt;
  receipt.task_index = o.task_index;
  receipt.task_count = o.task_count;
  receipt.plan_checksum = plan.checksum;
  receipt.options_json = options_json;
  const TaskSlice slice = plan.Slice(o.task_index);
  if (webdataset) {
    std::vector<WebDatasetMember> members;
    for (size_t i = slice.first; i < slice.last; ++i) {
      const PlannedInput& f = plan.files[i];
      members.push_back({f.member, f.key, f.size_bytes});
    }
    const std::string prefix = ShardPrefix(o.task_index);
    STOKER_ASSIGN_OR_RETURN(run.records,
                            WriteWebDataset(members, o.output_dir, o.shard_size_bytes,
                                            prefix.substr(0, prefix.size() - 1), false));
    receipt.webdataset = run.records->files;
    receipt.manifest.counters = {{"files_read", run.records->files_read},
                                 {"files_skipped", run.records->files_skipped},
                                 {"records", run.records->records},
                                 {"task_index", o.task_index},
                                 {"task_count", o.task_count}};
    run.records->output_dir = root;
  } else {
    o.plan = std::make_shared<const TaskPlan>(plan);
    o.on_progress = std::move(on_progress);
    STOKER_ASSIGN_OR_RETURN(run.pack, Pack(o, *tokenizer));
    receipt.manifest = run.pack->manifest;
  }
  STOKER_ASSIGN_OR_RETURN(receipt.inputs, HashInputs(plan, slice));
  if (run.format == PackFormat::kTfRecord) {
    std::string name = ShardPrefix(o.task_index);
    STOKER_ASSIGN_OR_RETURN(run.records,
                            ExportTfRecord(o.output_dir, receipt.manifest, o.shard_size_bytes,
                                           name.substr(0, name.size() - 1), false));
    receipt.tfrecord = run.records->files;
    run.records->output_dir = JoinUri(root, "tfrecord");
  }
  if (remote) {
    std::vector<std::string> files;
    for (const ShardInfo& s : receipt.manifest.shards) {
      files.push_back(s.prefix + ".bin");
      files.push_back(s.prefix + ".idx");
    }
    for (const RecordFileInfo& f : receipt.tfrecord) files.push_back("tfrecord/" + f.name);
    for (const RecordFileInfo& f : receipt.webdataset) files.push_back(f.name);
    STOKER_RETURN_IF_ERROR(UploadFiles(*backend, o.output_dir, root, files));
    STOKER_RETURN_IF_ERROR(
        DeleteOrphans(*backend, root, o.task_index, files, run.format == PackFormat::kTfRecord));
  }
  MaybeKillForTest(o.task_index);
  // Last, in one write: the task is finished exactly when its receipt exists.
  STOKER_RETURN_IF_ERROR(storage::WriteAll(*backend, run.receipt, receipt.ToJson()));
  return run;
}

}  // namespace stoker
