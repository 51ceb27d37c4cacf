// FileBackend: local files through the Backend interface. Names are plain paths or file:// URIs;
// List(prefix) lists every regular file below the prefix's directory whose name starts with the
// prefix (object-store semantics). Writers are AtomicFiles (common/atomic_file.h): they write
// "<path>.<pid>-<n>.tmp" beside the target (creating parent directories as needed), fsync it and
// rename it over the target on Close; List skips such files.
// Thread-safe.
#pragma once

#include <memory>

#include "storage/backend.h"

namespace stoker::storage {

std::unique_ptr<Backend> NewFileBackend();

}  // namespace stoker::storage
