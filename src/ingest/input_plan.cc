#include "ingest/input_plan.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <system_error>

#include "common/env.h"
#include "ingest/byte_stream.h"

namespace fs = std::filesystem;

namespace stoker {
namespace {

bool IsHidden(const fs::path& p) {
  std::string name = p.filename().string();
  return !name.empty() && name[0] == '.';
}

Status WalkDirectory(const std::string& dir, std::vector<InputFile>* out) {
  std::error_code ec;
  std::vector<InputFile> found;
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec);
  if (ec) return IOError(dir + ": cannot list directory: " + ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const fs::directory_entry& entry = *it;
    if (IsHidden(entry.path())) {
      if (entry.is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (!entry.is_regular_file(ec)) continue;  // directories are walked; sockets etc. ignored
    uint64_t size = entry.file_size(ec);
    if (ec) return IOError(entry.path().string() + ": cannot stat: " + ec.message());
    std::string path = entry.path().string();
    InputKind kind = InputKindFromName(path);
    found.push_back({std::move(path), size, kind, {}});
  }
  if (ec) return IOError(dir + ": error while listing the directory: " + ec.message());
  std::ranges::sort(found, {}, &InputFile::path);
  for (auto& f : found) out->push_back(std::move(f));
  return Status::OK();
}

}  // namespace

InputKind InputKindFromName(std::string_view path) {
  std::string_view base = StripCompressionSuffix(path);
  return base.ends_with(".jsonl") || base.ends_with(".ndjson") ? InputKind::kJsonl
                                                               : InputKind::kText;
}

Result<std::vector<InputFile>> ExpandInputs(const std::vector<std::string>& inputs) {
  std::vector<InputFile> files;
  for (const std::string& input : inputs) {
    std::error_code ec;
    fs::file_status st = fs::status(input, ec);
    if (ec || !fs::exists(st)) {
      if (ec && ec != std::errc::no_such_file_or_directory) {
        return IOError(input + ": cannot stat: " + ec.message());
      }
      return NotFound(input + ": no such file or directory");
    }
    if (fs::is_directory(st)) {
      STOKER_RETURN_IF_ERROR(WalkDirectory(input, &files));
    } else if (fs::is_regular_file(st)) {
      uint64_t size = fs::file_size(input, ec);
      if (ec) return IOError(input + ": cannot stat: " + ec.message());
      files.push_back({input, size, InputKindFromName(input), {}});
    } else {
      return InvalidArgument(input + ": not a regular file or a directory");
    }
  }
  return files;
}

TaskSlice SliceForTask(const std::vector<InputFile>& files, uint32_t task_index,
                       uint32_t task_count) {
  if (task_count <= 1) return {0, files.size()};
  unsigned __int128 total = 0;
  for (const auto& f : files) total += f.size_bytes;
  // A file belongs to the task whose share of the bytes contains the file's first byte; with no
  // bytes at all, files are dealt by count instead.
  auto owner = [&](size_t i, unsigned __int128 start) -> uint32_t {
    if (total == 0) return static_cast<uint32_t>(i * task_count / files.size());
    // Empty files after the last byte would compute task_count: they go to the last task.
    return static_cast<uint32_t>(
        std::min<unsigned __int128>(start * task_count / total, task_count - 1));
  };
  TaskSlice slice{files.size(), files.size()};
  bool started = false;
  unsigned __int128 start = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    uint32_t t = owner(i, start);
    if (t == task_index && !started) {
      slice.first = i;
      started = true;
    }
    if (t > task_index) {
      if (!started) slice.first = i;
      slice.last = i;
      return slice;
    }
    start += files[i].size_bytes;
  }
  if (!started) slice.first = files.size();
  return slice;
}

Result<TaskAssignment> TaskFromEnvironment() {
  TaskAssignment task;
  STOKER_ASSIGN_OR_RETURN(auto slurm_id, EnvNumber("SLURM_ARRAY_TASK_ID"));
  STOKER_ASSIGN_OR_RETURN(auto slurm_count, EnvNumber("SLURM_ARRAY_TASK_COUNT"));
  STOKER_ASSIGN_OR_RETURN(auto slurm_min, EnvNumber("SLURM_ARRAY_TASK_MIN"));
  STOKER_ASSIGN_OR_RETURN(auto rank, EnvNumber("RANK"));
  STOKER_ASSIGN_OR_RETURN(auto world, EnvNumber("WORLD_SIZE"));
  uint64_t index = 0, count = 1;
  if (slurm_id && slurm_count) {
    uint64_t min = slurm_min.value_or(0);
    if (*slurm_id < min) {
      return InvalidArgument("SLURM_ARRAY_TASK_ID is below SLURM_ARRAY_TASK_MIN");
    }
    index = *slurm_id - min;
    count = *slurm_count;
    task.source = "SLURM_ARRAY_TASK_ID";
  } else if (rank && world) {
    index = *rank;
    count = *world;
    task.source = "RANK";
  } else {
    task.source = "default";
  }
  if (count == 0 || count > UINT32_MAX || index >= count) {
    return InvalidArgument("task index " + std::to_string(index) + " of " + std::to_string(count) +
                           " from " + task.source + " is out of range (need 0 <= index < count)");
  }
  task.index = static_cast<uint32_t>(index);
  task.count = static_cast<uint32_t>(count);
  return task;
}

}  // namespace stoker
