// InputReader: reads the documents of a slice of the input list in order and cuts them into
// batches for the pack workers. At most one input file is open at any time, whatever the number
// of files. Not thread-safe: one user at a time (the pack reader thread).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ingest/document_encoder.h"
#include "ingest/input_plan.h"
#include "ingest/line_reader.h"
#include "ingest/record_inputs.h"

namespace stoker {

class InputReader {
 public:
  // `files` must outlive the reader. A batch closes once its documents hold `batch_bytes`.
  // Record shards yield one document per record: `text_field` is the field read, `key_field`
  // (optional) the one that names records in errors (see ingest/record_inputs.h). With
  // `skip_corrupt_shards`, a corrupt record shard ends early and yields one document whose
  // `corrupt_shard` is set (the encoder counts it) instead of failing the pack.
  InputReader(const std::vector<InputFile>* files, TaskSlice slice, uint64_t batch_bytes,
              std::string text_field = "text", std::string key_field = "",
              bool skip_corrupt_shards = false);

  // Replaces *batch with the next documents (file_index refers to `files`) and returns true, or
  // returns false when the slice is exhausted. *disk_bytes_done is set to the on-disk bytes
  // consumed while filling the batch (line by line for plain JSONL, whole files otherwise), for
  // progress and ETA. Errors name the file.
  Result<bool> NextBatch(std::vector<RawDocument>* batch, uint64_t* disk_bytes_done);
  // The size at which the next batches close (the pack reader makes its last ones smaller).
  void set_batch_bytes(uint64_t batch_bytes) { batch_bytes_ = batch_bytes; }

 private:
  const std::vector<InputFile>* files_;
  TaskSlice slice_;
  uint64_t batch_bytes_;
  size_t next_file_;
  std::string text_field_;
  std::string key_field_;
  bool skip_corrupt_shards_;
  std::unique_ptr<LineReader> lines_;              // the JSONL file being read, if any
  std::unique_ptr<RecordDocumentReader> records_;  // the record shard being read, if any
  uint64_t counted_in_file_ = 0;                   // disk bytes of that file already reported
};

}  // namespace stoker
