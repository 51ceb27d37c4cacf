#include "ingest/pack_records.h"

#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "format/megatron_source.h"
#include "ingest/input_plan.h"
#include "records/record_file_sink.h"
#include "records/tar_reader.h"
#include "records/tar_writer.h"
#include "records/tf_example.h"
#include "records/tfrecord.h"
#include "records/webdataset_source.h"
#include "storage/byte_source.h"

namespace stoker {
namespace {

constexpr size_t kCopyChunkBytes = 1 << 20;

// Appends the tar member `name` with the contents of the file at `path`.
Status AppendMember(RecordFileSink& sink, const std::string& name, const std::string& path) {
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> file, OpenFileSource(path));
  uint64_t size = file->size_bytes();
  STOKER_RETURN_IF_ERROR(sink.Append(TarMemberHeader(name, size)));
  std::string buf(static_cast<size_t>(std::min<uint64_t>(size, kCopyChunkBytes)), '\0');
  for (uint64_t off = 0; off < size;) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(size - off, buf.size()));
    STOKER_RETURN_IF_ERROR(ReadExactlyAt(*file, off, n, buf.data(), "input file"));
    STOKER_RETURN_IF_ERROR(sink.Append(std::string_view(buf.data(), n)));
    off += n;
  }
  return sink.Append(TarPadding(size));
}

Status CloseTar(RecordFileSink& sink) {
  if (sink.open_bytes() == 0) return Status::OK();
  STOKER_RETURN_IF_ERROR(sink.Append(TarEnd(sink.open_bytes())));
  return sink.Close();
}

// The fields of a TFRecord records.json beyond its files, as JSON text.
std::string TfRecordExtra(const Manifest& manifest) {
  return nlohmann::json{{"feature", "input_ids"},
                        {"tokenizer", manifest.tokenizer.name},
                        {"eos_id", manifest.tokenizer.eos_id}}
      .dump();
}

}  // namespace

RecordPackResult SummarizeRecordFiles(const std::vector<RecordFileInfo>& files,
                                      const std::string& dir) {
  RecordPackResult r;
  r.output_dir = dir;
  for (const RecordFileInfo& f : files) {
    ++r.output_files;
    r.output_bytes += f.size_bytes;
    r.records += f.records;
  }
  r.files = files;
  return r;
}

Result<std::vector<WebDatasetMember>> ListWebDatasetMembers(
    const std::vector<std::string>& inputs) {
  if (inputs.empty()) return InvalidArgument("no inputs given");
  std::vector<WebDatasetMember> members;
  for (const std::string& input : inputs) {
    STOKER_ASSIGN_OR_RETURN(std::vector<InputFile> files, ExpandInputs({input}));
    bool dir = IsDirectory(input);
    std::string base = input;
    while (base.size() > 1 && base.back() == '/') base.pop_back();
    for (InputFile& f : files) {
      std::string name = dir ? f.path.substr(base.size() + 1) : BaseName(f.path);
      members.push_back({std::move(name), std::move(f.path), f.size_bytes});
    }
  }
  return members;
}

std::string WebDatasetSampleKey(std::string_view member) {
  std::string_view k, ext;
  if (!SplitWebDatasetName(member, &k, &ext) || IsWebDatasetMetaName(member)) {
    return std::string(member);
  }
  return std::string(k);
}

Result<RecordPackResult> WriteWebDataset(const std::vector<WebDatasetMember>& members,
                                         const std::string& output_dir, uint64_t shard_size_bytes,
                                         const std::string& file_prefix, bool with_manifest) {
  RecordFileSink sink(output_dir, file_prefix, ".tar");
  RecordPackResult result;
  std::string key;  // of the sample being written
  bool in_sample = false;
  bool new_sample = false;
  Status st;
  for (const WebDatasetMember& m : members) {
    const std::string& name = m.name;
    std::string_view k, ext;
    if (!SplitWebDatasetName(name, &k, &ext) || IsWebDatasetMetaName(name)) {
      ++result.files_skipped;
      continue;
    }
    if (IsUnsafeMemberName(name)) {
      st = InvalidArgument(m.path + ": member name '" + name + "' is not a safe relative path");
      break;
    }
    if (!in_sample || k != key) {
      if (in_sample && sink.open_bytes() >= shard_size_bytes) st = CloseTar(sink);
      if (!st.ok()) break;
      key = std::string(k);
      in_sample = true;
      new_sample = true;
    }
    st = AppendMember(sink, name, m.path);
    if (!st.ok()) break;
    if (new_sample) sink.CountRecord();  // in the shard that the sample's first member opened
    new_sample = false;
    ++result.files_read;
  }
  if (st.ok()) st = CloseTar(sink);
  if (st.ok() && with_manifest) {
    nlohmann::json extra = {{"files_skipped", result.files_skipped}};
    st = sink.Finish(kRecordsManifestName, "webdataset", extra.dump());
  } else if (st.ok()) {
    st = MakeDirectories(output_dir);
    if (st.ok()) st = FsyncDirectory(output_dir);
  }
  if (!st.ok()) {
    sink.RemoveAll();
    return st;
  }
  RecordPackResult summary = SummarizeRecordFiles(sink.files(), output_dir);
  summary.files_read = result.files_read;
  summary.files_skipped = result.files_skipped;
  return summary;
}

std::string WebDatasetManifestJson(const std::vector<RecordFileInfo>& files,
                                   uint64_t files_skipped) {
  return RecordsManifestJson(files, "webdataset",
                             nlohmann::json{{"files_skipped", files_skipped}}.dump());
}

Result<RecordPackResult> PackWebDataset(const std::vector<std::string>& inputs,
                                        const std::string& output_dir, uint64_t shard_size_bytes,
                                        bool overwrite) {
  if (inputs.empty()) return InvalidArgument("no inputs given");
  std::string manifest = JoinPath(output_dir, kRecordsManifestName);
  if (PathExists(manifest)) {
    if (!overwrite) {
      return AlreadyExists(output_dir + " already holds shards (" + kRecordsManifestName +
                           "); pass --overwrite to replace them");
    }
    if (::unlink(manifest.c_str()) != 0) return ErrnoStatus("remove " + manifest, errno);
  }
  STOKER_ASSIGN_OR_RETURN(std::vector<WebDatasetMember> members, ListWebDatasetMembers(inputs));
  return WriteWebDataset(members, output_dir, shard_size_bytes, "shard", true);
}

std::string TfRecordManifestJson(const Manifest& manifest,
                                 const std::vector<RecordFileInfo>& files) {
  return RecordsManifestJson(files, "tfrecord", TfRecordExtra(manifest));
}

Result<RecordPackResult> ExportTfRecord(const std::string& dataset_dir, const Manifest& manifest,
                                        uint64_t shard_size_bytes, const std::string& file_prefix,
                                        bool with_manifest) {
  std::string dir = JoinPath(dataset_dir, "tfrecord");
  RecordFileSink sink(dir, file_prefix, ".tfrecord");
  std::vector<int32_t> tokens;
  Field ids;
  ids.name = "input_ids";
  ids.type = FieldType::kInt;
  std::vector<Field> fields;
  Status st;
  for (const ShardInfo& shard : manifest.shards) {
    Result<std::unique_ptr<MegatronSource>> source =
        MegatronSource::Open(JoinPath(dataset_dir, shard.prefix), MegatronIndex::Checks::kHeader);
    if (!source.ok()) {
      st = source.status();
      break;
    }
    for (uint64_t d = 0; d < (*source)->num_documents() && st.ok(); ++d) {
      uint64_t len = (*source)->document_length(d);
      tokens.resize(len);
      st = (*source)->Read(d, 0, len, tokens.data());
      if (!st.ok()) break;
      ids.ints.assign(tokens.begin(), tokens.end());
      fields.assign(1, ids);
      if (sink.open_bytes() >= shard_size_bytes) st = sink.Close();
      if (st.ok()) st = sink.Append(FrameTfRecord(EncodeTfExample(fields)));
      sink.CountRecord();
    }
    if (!st.ok()) break;
  }
  if (st.ok() && with_manifest) {
    st = sink.Finish(kRecordsManifestName, "tfrecord", TfRecordExtra(manifest));
  } else if (st.ok()) {
    st = sink.Close();
  }
  if (!st.ok()) {
    sink.RemoveAll();
    return st;
  }
  return SummarizeRecordFiles(sink.files(), dir);
}

}  // namespace stoker
