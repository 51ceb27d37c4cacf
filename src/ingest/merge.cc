#include "ingest/merge.h"

#include <algorithm>
#include <filesystem>

#include "common/file_util.h"
#include "common/uri.h"
#include "format/dataset_length_index.h"
#include "ingest/dataset_dir.h"

namespace fs = std::filesystem;

namespace stoker {
namespace {

struct Part {
  std::string dir;
  Manifest manifest;
};

bool SameTokenizer(const TokenizerInfo& a, const TokenizerInfo& b) {
  return a.kind == b.kind && a.name == b.name && a.vocab_size == b.vocab_size &&
         a.eos_id == b.eos_id && a.checksum == b.checksum;
}

std::string Describe(const TokenizerInfo& t) {
  return t.kind + " '" + t.name + "' (vocab " + std::to_string(t.vocab_size) + ", eos " +
         std::to_string(t.eos_id) + (t.checksum.empty() ? "" : ", xxh3 " + t.checksum) + ")";
}

Status CheckShardFiles(const std::string& part_dir, const ShardInfo& s) {
  for (auto [ext, expected] : {std::pair<const char*, uint64_t>{".bin", s.bin_bytes},
                               std::pair<const char*, uint64_t>{".idx", s.idx_bytes}}) {
    std::string path = JoinPath(part_dir, s.prefix + ext);
    Result<uint64_t> size = FileSizeBytes(path);
    if (!size.ok())
      return FailedPrecondition(path + ": shard file missing (" + size.status().message() + ")");
    if (*size != expected) {
      return FailedPrecondition(path + ": " + std::to_string(*size) +
                                " bytes, but the manifest of " + part_dir + " says " +
                                std::to_string(expected));
    }
  }
  return Status::OK();
}

uint64_t TaskCount(const Part& p) {
  auto it = p.manifest.counters.find("task_count");
  return it == p.manifest.counters.end() || !p.manifest.counters.count("task_index") ? 0
                                                                                     : it->second;
}

// Parts of a multi-task pack (task_count > 1) are put in task order and must be complete; whole
// datasets (single-task packs, earlier merges) keep the order given. Mixing the two is refused,
// since a missing part could then go unnoticed.
Status OrderByTask(std::vector<Part>* parts) {
  size_t multi = 0;
  for (const Part& p : *parts) multi += TaskCount(p) > 1 ? 1 : 0;
  if (multi == 0) return Status::OK();
  if (multi != parts->size()) {
    return FailedPrecondition(
        "cannot merge task parts together with whole datasets; merge the "
        "parts of each multi-task pack first");
  }
  uint64_t count = parts->front().manifest.counters.at("task_count");
  std::stable_sort(parts->begin(), parts->end(), [](const Part& a, const Part& b) {
    return a.manifest.counters.at("task_index") < b.manifest.counters.at("task_index");
  });
  for (size_t i = 0; i < parts->size(); ++i) {
    const Part& p = (*parts)[i];
    uint64_t index = p.manifest.counters.at("task_index");
    if (p.manifest.counters.at("task_count") != count) {
      return FailedPrecondition(p.dir + " is task " + std::to_string(index) + " of " +
                                std::to_string(p.manifest.counters.at("task_count")) + ", but " +
                                parts->front().dir + " is from a job of " + std::to_string(count) +
                                " tasks");
    }
    if (index != i) {
      std::string what =
          index < i ? "task " + std::to_string(index) + " is given twice (" + p.dir + ")"
                    : "task " + std::to_string(i) + " of " + std::to_string(count) + " is missing";
      return FailedPrecondition("cannot merge: " + what);
    }
  }
  if (parts->size() != count) {
    return FailedPrecondition("cannot merge: task " + std::to_string(parts->size()) + " of " +
                              std::to_string(count) + " is missing");
  }
  return Status::OK();
}

}  // namespace

Result<Manifest> Merge(const MergeOptions& given) {
  if (given.parts.empty()) return InvalidArgument("no parts to merge");
  MergeOptions options = given;
  for (std::string& part : options.parts) {
    STOKER_ASSIGN_OR_RETURN(part, LocalPathFromUri(part));
  }
  STOKER_ASSIGN_OR_RETURN(options.output_dir, LocalPathFromUri(given.output_dir));
  std::error_code ec;
  fs::path out = fs::weakly_canonical(fs::absolute(options.output_dir, ec), ec);
  std::vector<Part> parts;
  for (const std::string& dir : options.parts) {
    Result<Manifest> m = ReadManifest(dir);
    if (!m.ok()) {
      if (m.status().code() == StatusCode::kNotFound) {
        return NotFound(dir + ": not a complete stoker dataset (no " +
                        std::string(kManifestFileName) + ")");
      }
      return m.status();
    }
    fs::path canon = fs::weakly_canonical(fs::absolute(dir, ec), ec);
    if (canon == out) {
      return InvalidArgument("the output " + options.output_dir +
                             " is also a part; merge into a "
                             "new directory");
    }
    parts.push_back({dir, std::move(*m)});
  }
  STOKER_RETURN_IF_ERROR(OrderByTask(&parts));

  Manifest merged;
  merged.tokenizer = parts.front().manifest.tokenizer;
  merged.dtype = parts.front().manifest.dtype;
  for (const Part& p : parts) {
    const Manifest& m = p.manifest;
    if (!SameTokenizer(m.tokenizer, merged.tokenizer)) {
      return FailedPrecondition("cannot merge: " + p.dir + " was packed with tokenizer " +
                                Describe(m.tokenizer) + ", " + parts.front().dir + " with " +
                                Describe(merged.tokenizer));
    }
    if (m.dtype != merged.dtype) {
      return FailedPrecondition(
          "cannot merge: " + p.dir + " has " + std::string(TokenDTypeName(m.dtype)) + " tokens, " +
          parts.front().dir + " has " + std::string(TokenDTypeName(merged.dtype)));
    }
    fs::path part_abs = fs::weakly_canonical(fs::absolute(p.dir, ec), ec);
    fs::path rel = part_abs.lexically_relative(out);
    for (const ShardInfo& s : m.shards) {
      STOKER_RETURN_IF_ERROR(CheckShardFiles(p.dir, s));
      ShardInfo moved = s;
      moved.prefix = (rel / s.prefix).lexically_normal().string();
      merged.shards.push_back(std::move(moved));
    }
    for (const auto& [name, value] : m.counters) {
      if (name != "task_index" && name != "task_count") merged.counters[name] += value;
    }
  }
  merged.counters["merged_parts"] = parts.size();
  // Chat data: the parts' loss masks are merged the same way, in the same order, beside.
  std::optional<MergeOptions> masks;
  for (const Part& p : parts) {
    if (p.manifest.loss_mask.has_value() != parts.front().manifest.loss_mask.has_value()) {
      const Part& with = p.manifest.loss_mask ? p : parts.front();
      const Part& without = p.manifest.loss_mask ? parts.front() : p;
      return FailedPrecondition("cannot merge: " + with.dir + " is chat data with a loss mask, " +
                                without.dir + " has none");
    }
    if (!p.manifest.loss_mask) continue;
    if (!masks)
      masks = MergeOptions{{}, JoinPath(options.output_dir, LossMaskInfo{}.dataset), true};
    masks->parts.push_back(JoinPath(p.dir, p.manifest.loss_mask->dataset));
    if (!merged.loss_mask) merged.loss_mask = LossMaskInfo{};
    merged.loss_mask->trained_tokens += p.manifest.loss_mask->trained_tokens;
  }
  STOKER_RETURN_IF_ERROR(PrepareOutputDir(options.output_dir, {options.overwrite, false}));
  if (masks) STOKER_RETURN_IF_ERROR(Merge(*masks).status());
  // The merged dataset's own length index, read from the parts' shards, before the manifest.
  STOKER_ASSIGN_OR_RETURN(merged.length_index, BuildDatasetLengthIndex(options.output_dir, merged));
  STOKER_RETURN_IF_ERROR(WriteManifest(options.output_dir, merged));
  return merged;
}

}  // namespace stoker
