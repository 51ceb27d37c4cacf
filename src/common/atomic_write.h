// The one atomic whole-file write of stoker, in both strengths, and the names of its temporary
// files. WriteFileAtomically(path, contents) in file_util.h is the durable form of the one here.
//
// A reader sees either the old file or the complete new one: the contents are written to a
// temporary file of the writer's own beside `path` ("<path>.<pid>-<n>.tmp", so writers of one path
// in several threads or processes never share one) and renamed over `path`; on failure the
// temporary file is removed. Free functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "stoker/status.h"

namespace stoker {

// `durable`: fsyncs the file before the rename and the directory after, so the new contents
// survive a power loss. Without it a power loss may leave the old file, or the new name with
// incomplete bytes: for files whose readers check them (checksums, the shard cache's boot tags).
Status WriteFileAtomically(const std::string& path, std::string_view contents, bool durable);

// The name a temporary file of WriteFileAtomically stands for ("x.json" for "x.json.123-4.tmp",
// directories kept), or "" when `name` is not one.
std::string AtomicWriteTarget(std::string_view name);

}  // namespace stoker
