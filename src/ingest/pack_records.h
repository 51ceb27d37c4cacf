// The record-format outputs of `stoker pack --format`: webdataset (the original files of the
// inputs, grouped by key into tar shards; no tokenization) and tfrecord (the packed documents'
// token ids as tf.train.Example records, written next to the native token shards). Both write
// every file atomically and a records.json manifest (files, bytes, records, XXH3) last.
// Plain functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "format/manifest.h"
#include "records/record_file_sink.h"
#include "stoker/status.h"

namespace stoker {

inline constexpr char kRecordsManifestName[] = "records.json";

struct RecordPackResult {
  uint64_t files_read = 0;     // webdataset: input files stored
  uint64_t files_skipped = 0;  // webdataset: files without an extension (no sample key)
  uint64_t records = 0;        // samples (webdataset) or documents (tfrecord) written
  uint64_t output_files = 0;
  uint64_t output_bytes = 0;
  std::string output_dir;
  std::vector<RecordFileInfo> files;  // the files written (names relative to output_dir)
};

// The result of the record files `files`, written into `dir`: their count, bytes and records.
RecordPackResult SummarizeRecordFiles(const std::vector<RecordFileInfo>& files,
                                      const std::string& dir);

// Writes the files of `inputs` (files, and directories walked as pack walks them: sorted by
// path, hidden names skipped) into `output_dir`/shard-NNNNNN.tar. A file's member name is its
// path relative to the directory argument (its base name for a file argument); files with the
// same key (name up to the first dot of the last component) form one sample and one shard
// holds whole samples, closing once it reaches `shard_size_bytes`. kAlreadyExists if
// `output_dir` holds records.json and `overwrite` is off; kInvalidArgument for an unsafe name.
Result<RecordPackResult> PackWebDataset(const std::vector<std::string>& inputs,
                                        const std::string& output_dir, uint64_t shard_size_bytes,
                                        bool overwrite);

// One input file of a webdataset pack: its tar member name and where it is.
struct WebDatasetMember {
  std::string name;
  std::string path;
  uint64_t size_bytes = 0;
};

// PackWebDataset's member list for `inputs`, in pack's input order.
Result<std::vector<WebDatasetMember>> ListWebDatasetMembers(const std::vector<std::string>& inputs);

// The sample a member belongs to (webdataset's key; the whole name for a member it skips):
// consecutive members with one key are one sample, which a task split never cuts.
std::string WebDatasetSampleKey(std::string_view member);

// Writes `members` as PackWebDataset does, into `output_dir`/`file_prefix`-NNNNNN.tar; with
// `with_manifest`, records.json last (a task of a task-split pack writes none: the merge does).
Result<RecordPackResult> WriteWebDataset(const std::vector<WebDatasetMember>& members,
                                         const std::string& output_dir, uint64_t shard_size_bytes,
                                         const std::string& file_prefix, bool with_manifest);

// The records.json of WriteWebDataset for `files`.
std::string WebDatasetManifestJson(const std::vector<RecordFileInfo>& files,
                                   uint64_t files_skipped);

// Writes the documents of the stoker dataset in `dataset_dir` (described by `manifest`) into
// `dataset_dir`/tfrecord/part-NNNNNN.tfrecord, one Example {"input_ids": int64_list} per
// document (EOS included, as packed), files closing at `shard_size_bytes`. A task of a
// task-split pack (ingest/pack_task.h) names its files `file_prefix`-NNNNNN.tfrecord and writes
// no records.json (`with_manifest` false): the merge writes the job's.
Result<RecordPackResult> ExportTfRecord(const std::string& dataset_dir, const Manifest& manifest,
                                        uint64_t shard_size_bytes,
                                        const std::string& file_prefix = "part",
                                        bool with_manifest = true);

// The records.json of ExportTfRecord for `files` (in dataset_dir/tfrecord).
std::string TfRecordManifestJson(const Manifest& manifest,
                                 const std::vector<RecordFileInfo>& files);

}  // namespace stoker
