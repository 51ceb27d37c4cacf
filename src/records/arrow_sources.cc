// The host side of the Arrow readers: the first call loads libstoker_arrow.so
// (arrow/arrow_module.h) and every call goes through its table; a build without Arrow, or a module
// that cannot be loaded, makes every call the error that says so, naming the file.
#include "records/arrow_sources.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "records/arrow/arrow_module.h"
#include "records/record_store.h"
#include "records/runpath.h"

namespace stoker {
namespace {

using arrow_module::Readers;

// RTLD_DEEPBIND puts the module's own libraries (libarrow, libparquet and the simdjson inside
// them) ahead of the process's in their symbol lookups, so that libparquet never binds to the
// Debian libsimdjson stoker links (RTLD_LOCAL keeps the other direction shut). The sanitizer
// runtimes refuse RTLD_DEEPBIND: their builds load the module without it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kDeepBind = 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
constexpr int kDeepBind = 0;
#else
constexpr int kDeepBind = RTLD_DEEPBIND;
#endif
#else
constexpr int kDeepBind = RTLD_DEEPBIND;
#endif

struct Module {
  const Readers* readers = nullptr;
  std::string error;  // why there is none
};

#ifdef STOKER_ARROW_MODULE_BUILD_PATH
// Where the module may be: $STOKER_ARROW_MODULE, beside the binary or Python extension that holds
// this code (build/stoker, site-packages/stoker/_stoker.so), in a directory on that binary's
// RUNPATH (an installed stoker's lib/: cmake/install.cmake), then where the build put it.
std::vector<std::string> Candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("STOKER_ARROW_MODULE"); env != nullptr && *env != '\0') {
    out.emplace_back(env);
    return out;
  }
  Dl_info self;
  if (::dladdr(reinterpret_cast<const void*>(&Candidates), &self) != 0 &&
      self.dli_fname != nullptr && *self.dli_fname != '\0') {
    out.push_back(JoinPath(DirName(self.dli_fname), arrow_module::kModuleFileName));
  }
  for (const std::string& dir : RunpathDirs(reinterpret_cast<const void*>(&Candidates))) {
    out.push_back(JoinPath(dir, arrow_module::kModuleFileName));
  }
  out.emplace_back(STOKER_ARROW_MODULE_BUILD_PATH);
  return out;
}
#endif

Module Load() {
  Module m;
#ifndef STOKER_ARROW_MODULE_BUILD_PATH
  m.error =
      "this stoker was built without Parquet/Arrow support (configure with pyarrow installed in "
      ".venv, or -DSTOKER_ARROW=ON)";
#else
  for (const std::string& path : Candidates()) {
    if (!PathExists(path)) {
      m.error += (m.error.empty() ? "" : "; ") + path + ": no such file";
      continue;
    }
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | kDeepBind);
    if (handle == nullptr) {
      const char* why = ::dlerror();
      m.error += (m.error.empty() ? "" : "; ") + std::string(why ? why : path);
      continue;
    }
    // Never closed: its code is behind every RecordSource it returned.
    using Entry = const Readers* (*)();
    auto entry = reinterpret_cast<Entry>(::dlsym(handle, arrow_module::kEntryPoint));
    const Readers* readers = entry != nullptr ? entry() : nullptr;
    if (readers == nullptr || readers->table_bytes != sizeof(Readers) ||
        readers->shard_bytes != sizeof(RecordShard)) {
      m.error += (m.error.empty() ? "" : "; ") + path + ": not this stoker's Arrow module";
      continue;
    }
    m.readers = readers;
    m.error.clear();
    return m;
  }
  m.error = "cannot load the Parquet/Arrow module (" + m.error + ")";
#endif
  return m;
}

// The module, loaded on the first call (thread-safe: a function-local static).
const Module& TheModule() {
  static const Module module = Load();
  return module;
}

Result<const Readers*> LoadedReaders(const std::string& path) {
  const Module& m = TheModule();
  if (m.readers == nullptr) return Unimplemented(path + ": " + m.error);
  return m.readers;
}

}  // namespace

bool ArrowReadersAvailable() { return TheModule().readers != nullptr; }

Result<std::vector<RecordShard>> ListParquetShards(const std::string& path,
                                                   const RecordStore& store, uint64_t size_bytes) {
  STOKER_ASSIGN_OR_RETURN(const arrow_module::Readers* readers, LoadedReaders(path));
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> owned,
                          store.Open(path, size_bytes, /*forward=*/false));
  const uint64_t file_bytes = owned->size_bytes();
  Result<std::vector<arrow_module::ParquetRowGroup>> groups =
      readers->parquet_row_groups(std::move(owned));
  std::vector<RecordShard> shards;
  auto shard = [&](int64_t part, uint64_t bytes) {
    RecordShard s;
    s.path = path;
    s.format = RecordFormat::kParquet;
    s.part = part;
    s.store = store;
    s.object_bytes = file_bytes;
    s.size_bytes = bytes;
    shards.push_back(std::move(s));
  };
  if (!groups.ok() && groups.status().code() == StatusCode::kCorruption) {
    // A footer that does not parse: the whole file is one shard whose open reports it (naming the
    // file and the footer's offset), so that the reader's skip policy decides, as for any shard.
    shard(-1, file_bytes);
    return shards;
  }
  STOKER_RETURN_IF_ERROR(groups.status());
  for (const arrow_module::ParquetRowGroup& g : *groups) shard(g.part, g.size_bytes);
  return shards;
}

Result<std::unique_ptr<RecordSource>> OpenParquetShard(const RecordShard& shard,
                                                       std::shared_ptr<const ByteSource> source) {
  STOKER_ASSIGN_OR_RETURN(const arrow_module::Readers* readers, LoadedReaders(shard.path));
  return readers->open_parquet_shard(shard, std::move(source));
}

Result<std::unique_ptr<RecordSource>> OpenArrowIpcShard(const RecordShard& shard,
                                                        std::shared_ptr<const ByteSource> source) {
  STOKER_ASSIGN_OR_RETURN(const arrow_module::Readers* readers, LoadedReaders(shard.path));
  return readers->open_arrow_ipc_shard(shard, std::move(source));
}

Result<TokenColumn> ReadArrowTokenColumn(const std::string& path, RecordFormat format,
                                         const std::string& column) {
  STOKER_ASSIGN_OR_RETURN(const arrow_module::Readers* readers, LoadedReaders(path));
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> file, OpenFileSource(path));
  return readers->read_token_column(std::move(file), format, column);
}

Result<std::unique_ptr<ParquetTableWriter>> OpenParquetTableWriter(
    const std::string& path, const std::vector<ParquetColumnSpec>& columns) {
  STOKER_ASSIGN_OR_RETURN(const arrow_module::Readers* readers, LoadedReaders(path));
  return readers->open_parquet_table_writer(path, columns);
}

}  // namespace stoker
