#include "plan/megatron_totals.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "common/hash.h"
#include "format/length_hash.h"
#include "plan/window_counts.h"

namespace stoker::plan {
namespace {

constexpr char kMagic[8] = {'S', 'T', 'K', 'M', 'G', 'T', 'T', '1'};

struct Identity {
  std::string head;  // magic, then the file's identity: the cache file must begin with it
  std::string name;  // the cache file's name
};

Result<Identity> IdentityOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrnoStatus("stat " + path, errno);
  Identity id;
  id.head.assign(kMagic, sizeof kMagic);
  for (uint64_t v : {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                     static_cast<uint64_t>(st.st_size),
                     static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                     static_cast<uint64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec}) {
    id.head.append(reinterpret_cast<const char*>(&v), 8);
  }
  id.name = "megatron-" + Xxh3Hex(Xxh3(id.head.data(), id.head.size())) + ".totals";
  return id;
}

// One pass: the sums and the fingerprint's hash of the lengths (a chain of mixes, hence one
// thread; the fingerprint must stay the function of the lengths that checkpoints hold).
Result<LengthTotals> Count(const MegatronSource& source) {
  const MegatronIndex& index = source.index();
  const uint64_t n = index.num_sequences();
  LengthTotals t;
  FingerprintHasher hash;
  for (uint64_t d = 0; d < n; ++d) {
    const int32_t len = index.sequence_length(d);
    if (len < 0) {
      return CorruptionAt(source.idx_file().path(), kMegatronHeaderBytes + 4 * d,
                          "sequence " + std::to_string(d) + " has negative length " +
                              std::to_string(len));
    }
    t.tokens += static_cast<uint64_t>(len);
    t.nonempty_documents += len != 0;
    hash.Add(static_cast<uint64_t>(len));
  }
  t.length_hash = hash.value();
  return t;
}

// Holds an exclusive lock on `path` (created if missing) while alive: the ranks of a machine
// opening the same new .idx together count it once; the others wait, then read the cache.
class FileLock {
 public:
  explicit FileLock(const std::string& path)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

std::optional<LengthTotals> ReadCached(const std::string& dir, const Identity& id) {
  std::optional<std::string> body = ReadCacheFile(dir, id.name, id.head, 24);
  if (!body) return std::nullopt;
  LengthTotals t;
  uint64_t hash;
  std::memcpy(&t.tokens, body->data(), 8);
  std::memcpy(&t.nonempty_documents, body->data() + 8, 8);
  std::memcpy(&hash, body->data() + 16, 8);
  t.length_hash = hash;
  return t;
}

}  // namespace

Result<LengthTotals> MegatronTotals(const MegatronSource& source) {
  std::optional<std::string> dir = CacheDirectory();
  Result<Identity> id = IdentityOf(source.idx_file().path());
  if (!dir || !id.ok()) return Count(source);
  if (std::optional<LengthTotals> t = ReadCached(*dir, *id)) return *t;
  if (!MakeDirectories(*dir).ok()) return Count(source);
  FileLock lock(JoinPath(*dir, id->name + ".lock"));
  if (std::optional<LengthTotals> t = ReadCached(*dir, *id)) return *t;  // counted while we waited
  STOKER_ASSIGN_OR_RETURN(LengthTotals t, Count(source));
  std::string bytes = id->head;
  for (uint64_t v : {t.tokens, t.nonempty_documents, *t.length_hash}) {
    bytes.append(reinterpret_cast<const char*>(&v), 8);
  }
  WriteCacheFile(*dir, id->name, std::move(bytes));
  return t;
}

}  // namespace stoker::plan
