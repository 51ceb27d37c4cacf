// Publishing a packed dataset to an object store. `stoker pack -o s3://b/p` packs into a local
// staging directory (pack's writers are files: shards renamed into place, the length index
// pwritten, the manifest last), then UploadDataset copies what the manifest names — shards and
// length index by several threads, each object through the backend's Writer (a multipart upload
// when it is larger than a part), and the manifest last, so that the dataset exists at `uri`
// exactly when its manifest does, as on local disk. Free functions; thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "stoker/status.h"
#include "storage/backend.h"

namespace stoker {

// Where a pack writes: `local_dir`; for a remote output also the staging directory behind it.
struct PackDestination {
  std::string uri;                   // what the user gave (-o)
  std::string local_dir;             // where the pack writes
  std::unique_ptr<TempDir> staging;  // set for a remote output; removed with it
  bool remote() const { return staging != nullptr; }
};

// A local output is used as it is (file:// turned into a path). A remote one (s3://) gets a
// staging directory; kAlreadyExists if `uri` already holds a manifest and `overwrite` is off.
// http(s):// is refused (read-only); other schemes name the served ones.
// `marker`: the file whose presence at `uri` means "a dataset is there" (records.json for the
// record-format outputs of pack --format webdataset).
Result<PackDestination> PreparePackDestination(const std::string& output, bool overwrite,
                                               const std::string& marker = "manifest.json");

// Uploads the dataset in `local_dir` to `uri` (see above). Errors name the object.
Status UploadDataset(const storage::Backend& backend, const std::string& local_dir,
                     const std::string& uri);

// Uploads local_dir/<files[i]> to uri/<files[i]> on up to 8 threads; the first error wins.
Status UploadFiles(const storage::Backend& backend, const std::string& local_dir,
                   const std::string& uri, const std::vector<std::string>& files);

// UploadDataset to the destination's uri when it is remote; nothing otherwise.
Status FinishPackDestination(const PackDestination& destination);

// The record-format outputs (pack --format webdataset|tfrecord, ingest/pack_records.h): when the
// destination is remote, uploads every file under local_dir/`subdir` to uri/`subdir` (8
// threads), the records.json manifest after all the others; nothing for a local destination.
Status FinishRecordsDestination(const PackDestination& destination, const std::string& subdir);

}  // namespace stoker
