#include "plan/megatron_totals.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "common/hash.h"
#include "plan/window_counts.h"

namespace stoker::plan {
namespace {

constexpr char kMagic[8] = {'S', 'T', 'K', 'M', 'G', 'T', 'T', '1'};
constexpr uint64_t kChunkDocs = uint64_t{1} << 20;  // documents a thread sums at a time

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

// One pass, in parallel over chunks of documents.
Result<LengthTotals> Count(const MegatronSource& source) {
  const MegatronIndex& index = source.index();
  const uint64_t n = index.num_sequences();
  const uint64_t chunks = (n + kChunkDocs - 1) / kChunkDocs;
  std::vector<uint64_t> nonempty(chunks), negative(chunks, UINT64_MAX);
  std::vector<uint64_t> tokens = CountWindowsInParallel(0, chunks, CountingThreads(), [&](uint64_t c) {
    const uint64_t end = std::min(n, (c + 1) * kChunkDocs);
    uint64_t sum = 0, nonzero = 0, bad = 0;
    for (uint64_t d = c * kChunkDocs; d < end; ++d) {
      const int32_t len = index.sequence_length(d);
      sum += static_cast<uint32_t>(len);
      nonzero += len != 0;
      bad += len < 0;
    }
    if (bad > 0) {
      for (uint64_t d = c * kChunkDocs; d < end && negative[c] == UINT64_MAX; ++d) {
        if (index.sequence_length(d) < 0) negative[c] = d;
      }
    }
    nonempty[c] = nonzero;
    return sum;
  });
  LengthTotals t;
  for (uint64_t c = 0; c < chunks; ++c) {
    if (negative[c] != UINT64_MAX) {
      return CorruptionAt(source.idx_file().path(), kMegatronHeaderBytes + 4 * negative[c],
                          "sequence " + std::to_string(negative[c]) + " has negative length " +
                              std::to_string(index.sequence_length(negative[c])));
    }
    t.tokens += tokens[c];
    t.nonempty_documents += nonempty[c];
  }
  return t;
}

}  // namespace

Result<LengthTotals> MegatronTotals(const MegatronSource& source) {
  std::optional<std::string> dir = CacheDirectory();
  Result<Identity> id = IdentityOf(source.idx_file().path());
  if (dir && id.ok()) {
    if (std::optional<std::string> body = ReadCacheFile(*dir, id->name, id->head, 16)) {
      LengthTotals t;
      std::memcpy(&t.tokens, body->data(), 8);
      std::memcpy(&t.nonempty_documents, body->data() + 8, 8);
      return t;
    }
  }
  STOKER_ASSIGN_OR_RETURN(LengthTotals t, Count(source));
  if (dir && id.ok()) {
    std::string bytes = id->head;
    bytes.append(reinterpret_cast<const char*>(&t.tokens), 8);
    bytes.append(reinterpret_cast<const char*>(&t.nonempty_documents), 8);
    WriteCacheFile(*dir, id->name, std::move(bytes));
  }
  return t;
}

}  // namespace stoker::plan
