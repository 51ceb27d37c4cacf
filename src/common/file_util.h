// File helpers shared by every module: whole-file reads, atomic writes, directories.
//
// All functions are free functions over paths; errors name the path. Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/status.h"

namespace stoker {

// Reads the whole file. kNotFound if it does not exist. The string's capacity() is at least
// size() + `spare_bytes` (simdjson reads up to 64 bytes past the end of its input).
Result<std::string> ReadFileToString(const std::string& path, size_t spare_bytes = 0);

// Writes `contents` to `path` so that a reader sees either the old file or the complete new one:
// an AtomicFile (common/atomic_file.h, the one atomic file commit of stoker) written in one call.
// The contents go to a temporary file of the writer's own beside `path` ("<path>.<pid>-<n>.tmp"),
// renamed over `path`; on failure it is removed. `durable`: fsyncs the file before the rename and
// the directory after, so the new contents survive a power loss. Without it a power loss may leave
// the old file, or the new name with incomplete bytes: for files whose readers check them
// (checksums, the shard cache's boot tags).
Status WriteFileAtomically(const std::string& path, std::string_view contents, bool durable = true);

// The name a temporary file of WriteFileAtomically stands for ("x.json" for "x.json.123-4.tmp",
// directories kept), or "" when `name` is not one.
std::string AtomicWriteTarget(std::string_view name);

// Removes the file `path` (unlink); OK if it does not exist. Errors: "<path>: cannot remove".
Status RemoveFileIfPresent(const std::string& path);

// Writes all of `data` to `fd` at its offset, retrying on EINTR. Errors: "write <path>".
Status WriteAll(int fd, std::string_view data, const std::string& path);
// Writes the `n` bytes at `data` to `fd` at `offset` (pwrite), retrying on EINTR. Errors: "write
// <path>".
Status PwriteAll(int fd, const void* data, size_t n, uint64_t offset, const std::string& path);

// fsyncs a directory so that renames and creations inside it survive a crash.
Status FsyncDirectory(const std::string& dir);

// Creates `dir` and its missing parents (like `mkdir -p`). OK if it already exists.
Status MakeDirectories(const std::string& dir);

// Names (not paths) of the entries of `dir`, sorted bytewise, without "." and "..".
Result<std::vector<std::string>> ListDirectory(const std::string& dir);

bool PathExists(const std::string& path);
bool IsDirectory(const std::string& path);
// Size in bytes of a regular file.
Result<uint64_t> FileSizeBytes(const std::string& path);

// "a" + "b" -> "a/b"; an absolute `b` is returned as is; an empty `a` gives `b`.
std::string JoinPath(std::string_view a, std::string_view b);
// "x/y/z.bin" -> "x/y"; "z.bin" -> ".".
std::string DirName(std::string_view path);
// "x/y/z.bin" -> "z.bin".
std::string BaseName(std::string_view path);

}  // namespace stoker
