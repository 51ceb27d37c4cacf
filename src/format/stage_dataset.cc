#include "format/stage_dataset.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "common/file_util.h"
#include "common/uri.h"
#include "format/manifest.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;

struct FileToStage {
  std::string rel;
  uint64_t size = 0;
};

// How many leading ".." a relative path climbs.
int Climbs(const std::string& rel) {
  int depth = 0, worst = 0;
  for (const auto& part : fs::path(rel)) {
    if (part == "..")
      --depth;
    else if (part != "." && !part.empty())
      ++depth;
    worst = std::min(worst, depth);
  }
  return -worst;
}

Status Download(const storage::Backend& backend, const std::string& remote, uint64_t size,
                const std::string& local) {
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source,
                          backend.OpenForReadWithSize(remote, size));
  std::error_code ec;
  fs::create_directories(fs::path(local).parent_path(), ec);
  std::ofstream out(local, std::ios::binary | std::ios::trunc);
  if (!out) return IOError(local + ": cannot create");
  constexpr size_t kChunk = size_t{8} << 20;
  std::string buffer(std::min<uint64_t>(kChunk, size), '\0');
  for (uint64_t at = 0; at < size;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, size - at));
    STOKER_RETURN_IF_ERROR(ReadExactlyAt(*source, at, n, buffer.data(), "object"));
    out.write(buffer.data(), static_cast<std::streamsize>(n));
    at += n;
  }
  out.close();
  if (!out) return IOError(local + ": write failed");
  return Status::OK();
}

}  // namespace

Result<StagedDataset> StageRemoteDataset(const storage::Backend& backend, const std::string& uri,
                                         int threads) {
  const std::string manifest_uri = JoinUri(uri, kManifestFileName);
  STOKER_ASSIGN_OR_RETURN(std::string text, storage::ReadAll(backend, manifest_uri));
  STOKER_ASSIGN_OR_RETURN(Manifest m, Manifest::Parse(text, manifest_uri));
  std::vector<FileToStage> files;
  for (const ShardInfo& s : m.shards) {
    files.push_back({s.prefix + ".idx", s.idx_bytes});
    files.push_back({s.prefix + ".bin", s.bin_bytes});
  }
  if (m.length_index) files.push_back({m.length_index->file, m.length_index->bytes});
  int depth = 0;
  for (const FileToStage& f : files) depth = std::max(depth, Climbs(f.rel));
  StagedDataset staged;
  STOKER_ASSIGN_OR_RETURN(staged.root, TempDir::Create("stoker-stage-"));
  // The dataset sits `depth` levels down, so that "../x" of a merged dataset stays inside root.
  std::string dir = staged.root->path();
  for (int i = 0; i < depth; ++i) dir = JoinPath(dir, "d");
  staged.dir = JoinPath(dir, "dataset");
  std::error_code ec;
  fs::create_directories(staged.dir, ec);
  if (ec) return IOError(staged.dir + ": " + ec.message());
  STOKER_RETURN_IF_ERROR(WriteFileAtomically(JoinPath(staged.dir, kManifestFileName), text));

  std::atomic<size_t> next{0};
  std::mutex mu;
  Status first_error;
  auto work = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      const std::string local = fs::path(JoinPath(staged.dir, files[i].rel)).lexically_normal();
      Status st = Download(backend, JoinUri(uri, files[i].rel), files[i].size, local);
      if (st.code() == StatusCode::kNotFound) continue;  // reported as missing by the check
      if (!st.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.ok()) first_error = st;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, threads); ++t) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
  if (!first_error.ok()) return first_error;
  return staged;
}

}  // namespace stoker
