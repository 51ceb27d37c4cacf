// Output of the record writers (WebDataset tar shards, TFRecord files): each file is an
// AtomicFile (common/atomic_file.h: renamed into place only when complete, fsynced), hashed with
// XXH3 as it is written; a JSON manifest listing every file (name, bytes, records, xxh3) is written
// last, atomically, so a reader that finds the manifest finds every file it lists complete. Not
// thread-safe: one user at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/atomic_file.h"
#include "common/hash.h"
#include "stoker/status.h"

namespace stoker {

struct RecordFileInfo {
  std::string name;  // relative to the output directory
  uint64_t size_bytes = 0;
  uint64_t records = 0;
  std::string xxh3;
};

// The manifest RecordFileSink::Finish writes: `extra_json` (a JSON object text, or empty) with
// `format`, the files and their record total merged in, as indented JSON text.
std::string RecordsManifestJson(const std::vector<RecordFileInfo>& files, const std::string& format,
                                const std::string& extra_json);

class RecordFileSink {
 public:
  // Writes into `dir` (created if missing) files named "<prefix>-NNNNNN<suffix>".
  RecordFileSink(std::string dir, std::string prefix, std::string suffix);
  ~RecordFileSink();
  RecordFileSink(const RecordFileSink&) = delete;
  RecordFileSink& operator=(const RecordFileSink&) = delete;

  // Appends to the open file, opening the next one first if none is open.
  Status Append(std::string_view bytes);
  // Counts one record in the open file (call it after the record's first Append).
  void CountRecord() { ++current_.records; }
  // Bytes written to the open file so far (0 when none is open).
  uint64_t open_bytes() const { return file_ ? current_.size_bytes : 0; }
  // Completes the open file (fsync, rename); a no-op when none is open.
  Status Close();
  // Closes the open file and writes "<dir>/<manifest_name>" listing the files, with `format`
  // and `extra` (a JSON object text, or empty) merged in.
  Status Finish(const std::string& manifest_name, const std::string& format,
                const std::string& extra_json);
  // Removes every file this sink wrote (after an error).
  void RemoveAll();

  const std::vector<RecordFileInfo>& files() const { return done_; }

 private:
  std::string dir_, prefix_, suffix_;
  std::unique_ptr<AtomicFile> file_;  // the open file; null when none is
  RecordFileInfo current_;
  std::unique_ptr<Xxh3Hasher> hasher_;
  std::vector<RecordFileInfo> done_;
};

}  // namespace stoker
