#include "format/megatron_lengths.h"

#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/file_lock.h"
#include "common/file_util.h"
#include "common/hash.h"
#include "common/load.h"
#include "common/window_counts.h"
#include "format/length_hash.h"
#include "format/token_convert.h"

namespace stoker {
namespace {

constexpr char kMagic[8] = {'S', 'T', 'K', 'M', 'G', 'T', 'T', '1'};
constexpr uint32_t kChunkShift = 10;        // sequences checked together (as a length index)
constexpr uint64_t kCountWindow = 1 << 20;  // sequences per task of the parallel count

std::atomic<uint64_t> passes{0};

struct Identity {
  std::string head;  // magic, then the file's identity: the cache file must begin with it
  std::string name;  // the cache file's name, without extension
};

std::optional<Identity> IdentityOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  Identity id;
  id.head.assign(kMagic, sizeof kMagic);
  for (uint64_t v : {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                     static_cast<uint64_t>(st.st_size),
                     static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                     static_cast<uint64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec}) {
    id.head.append(reinterpret_cast<const char*>(&v), 8);
  }
  id.name = "megatron-" + Xxh3Hex(Xxh3(id.head.data(), id.head.size()));
  return id;
}

// What the plan keeps of one open: the .idx mapping, the chunk checks and the lazy totals.
struct MegatronLengthsOwner {
  std::shared_ptr<const MappedFile> idx;
  MegatronIndex index;
  std::string idx_path;
  std::string bin_path;
  uint64_t item = 0;
  uint64_t tokens = 0;
  bool check_contiguous = false;  // the token total came from the .bin's size
  std::optional<std::string> cache_dir;
  std::optional<Identity> id;
  std::unique_ptr<ChunkVerifier> verifier;

  std::once_flag nonempty_once, hash_once;
  uint64_t nonempty = 0, hash = 0;

  MegatronLengthsOwner(std::shared_ptr<const MappedFile> f, const MegatronIndex& i)
      : idx(std::move(f)), index(i) {}

  uint64_t Length(uint64_t d) const {
    const int32_t len = index.sequence_length(d);
    return len < 0 ? 0 : static_cast<uint64_t>(len);
  }

  // Lengths non-negative, and the chunk's sequences spanning exactly their tokens' bytes, from
  // its first pointer to the next chunk's (the .bin's end after the last): over every chunk that
  // sums to the .bin's size, so the total is the lengths' sum. Two pointers per chunk, not 1,024.
  Status VerifyChunk(uint64_t c) const {
    const uint64_t n = index.num_sequences();
    const uint64_t first = c << kChunkShift, last = std::min(n, first + (1u << kChunkShift));
    uint64_t sum = 0;
    for (uint64_t d = first; d < last; ++d) {
      const int32_t len = index.sequence_length(d);
      if (len < 0) {
        return CorruptionAt(
            idx_path, kMegatronHeaderBytes + 4 * d,
            "sequence " + std::to_string(d) + " has negative length " + std::to_string(len));
      }
      sum += static_cast<uint64_t>(len);
    }
    if (!check_contiguous) return Status::OK();
    const int64_t begin = index.sequence_pointer(first);
    const int64_t end =
        last < n ? index.sequence_pointer(last) : static_cast<int64_t>(tokens * item);
    if (end - begin != static_cast<int64_t>(sum * item)) {
      return CorruptionAt(
          idx_path, index.pointers_offset() + 8 * first,
          "sequences " + std::to_string(first) + " to " + std::to_string(last - 1) + " hold " +
              std::to_string(sum) + " tokens but span bytes " + std::to_string(begin) + " to " +
              std::to_string(end) + " of " + bin_path +
              ": the plan takes the token total from the .bin's size, which holds only for "
              "sequences stored end to end (as Megatron writes them)");
    }
    return Status::OK();
  }

  std::string CachePath(const char* ext) const { return JoinPath(*cache_dir, id->name + ext); }

  std::optional<std::string> ReadTotals() const {
    if (!cache_dir || !id) return std::nullopt;
    return ReadCacheFile(*cache_dir, id->name + ".totals", id->head, 24);
  }

  // An exclusive lock on the cache file's lock (created if missing), or null when there is no
  // cache: the ranks of a machine opening the same new .idx together count it once; the others
  // wait, then read the cache.
  std::unique_ptr<FileLock> LockCache() const {
    if (!cache_dir || !id || !MakeDirectories(*cache_dir).ok()) return nullptr;
    Result<std::unique_ptr<FileLock>> lock =
        FileLock::Acquire(CachePath(".lock"), LockMode::kExclusive);
    return lock.ok() ? std::move(*lock) : nullptr;
  }

  // The hash pass (one thread: a chain), which also counts; cached when the file is sound.
  void ComputeHash() {
    const std::unique_ptr<FileLock> lock = LockCache();
    if (std::optional<std::string> body = ReadTotals()) {  // counted while we waited
      hash = LoadAs<uint64_t>(body->data() + 16);
      return;
    }
    passes.fetch_add(1, std::memory_order_relaxed);
    FingerprintHasher h;
    uint64_t sum = 0, count = 0;
    bool negative = false;
    const uint64_t n = index.num_sequences();
    for (uint64_t d = 0; d < n; ++d) {
      const int32_t len = index.sequence_length(d);
      negative |= len < 0;
      const uint64_t l = len < 0 ? 0 : static_cast<uint64_t>(len);
      sum += l;
      count += l != 0;
      h.Add(l);
    }
    hash = h.value();
    // Lengths that do not sum to the total: every chunk is checked, so the failure (naming the
    // sequence) is the error of every batch from now on.
    if (check_contiguous && (negative || sum != tokens)) (void)verifier->VerifyAll();
    // A file whose lengths disagree with the total is reported by its chunk checks; the cache
    // holds only totals of sound files (what a later open trusts without the contiguity checks).
    if (!lock || negative || sum != tokens) return;
    std::string bytes = id->head;
    for (uint64_t v : {sum, count, hash}) bytes.append(reinterpret_cast<const char*>(&v), 8);
    WriteCacheFile(*cache_dir, id->name + ".totals", std::move(bytes));
  }

  // Counted in parallel (no chain), unless the cache or the hash pass has it.
  void CountNonempty() {
    const std::unique_ptr<FileLock> lock = LockCache();
    if (std::optional<std::string> body = ReadTotals()) {
      nonempty = LoadAs<uint64_t>(body->data() + 8);
      return;
    }
    if (lock) {
      if (auto body = ReadCacheFile(*cache_dir, id->name + ".nonempty", id->head, 8)) {
        nonempty = LoadAs<uint64_t>(body->data());
        return;
      }
    }
    passes.fetch_add(1, std::memory_order_relaxed);
    const uint64_t n = index.num_sequences();
    std::vector<uint64_t> counts = CountWindowsInParallel(
        0, (n + kCountWindow - 1) / kCountWindow, CountingThreads(), [&](uint64_t w) {
          uint64_t c = 0;
          for (uint64_t d = w * kCountWindow, e = std::min(n, d + kCountWindow); d < e; ++d) {
            c += index.sequence_length(d) > 0;
          }
          return c;
        });
    for (uint64_t c : counts) nonempty += c;
    if (!lock) return;
    std::string bytes = id->head;
    bytes.append(reinterpret_cast<const char*>(&nonempty), 8);
    WriteCacheFile(*cache_dir, id->name + ".nonempty", std::move(bytes));
  }
};

}  // namespace

Result<DatasetLengths> MegatronSource::Lengths() const {
  DatasetLengths out;
  if (nonempty_documents_) {  // counted while the source validated every entry
    out.mapped = {idx_->data() + kMegatronHeaderBytes, num_documents(),
                  MappedLengths::Element::kInt32, idx_};
    out.totals = LengthTotals{num_tokens(), *nonempty_documents_, std::nullopt, {}, {}};
  } else {
    // O(1): the total from the .bin's size, the rest when first needed.
    STOKER_ASSIGN_OR_RETURN(out, MegatronLengths(*this));
  }
  out.name = path();
  out.shard_first_document = {0, num_documents()};
  return out;
}

uint64_t MegatronLengthPasses() { return passes.load(std::memory_order_relaxed); }

Result<DatasetLengths> MegatronLengths(const MegatronSource& source) {
  auto owner = std::make_shared<MegatronLengthsOwner>(source.shared_idx_file(), source.index());
  MegatronLengthsOwner& o = *owner;
  const MegatronIndex& index = o.index;
  const uint64_t n = index.num_sequences();
  o.idx_path = source.idx_file().path();
  o.bin_path = source.bin_file().path();
  o.item = TokenDTypeSize(index.dtype());
  o.cache_dir = CacheDirectory();
  if (o.cache_dir) o.id = IdentityOf(o.idx_path);
  DatasetLengths out;
  out.mapped = {source.idx_file().data() + kMegatronHeaderBytes, n, MappedLengths::Element::kInt32,
                owner, nullptr};
  LengthTotals totals;
  if (std::optional<std::string> body = o.ReadTotals()) {
    // Counted by an earlier open of this very file: exact, whatever the layout of the .bin.
    o.tokens = LoadAs<uint64_t>(body->data());
    o.nonempty = LoadAs<uint64_t>(body->data() + 8);
    o.hash = LoadAs<uint64_t>(body->data() + 16);
    totals = LengthTotals{o.tokens, o.nonempty, o.hash, {}, {}};
  } else {
    const uint64_t bin = source.bin_file().size();
    if (n > 0) {
      const int64_t first = index.sequence_pointer(0);
      const int64_t last_len = index.sequence_length(n - 1);
      const int64_t end = index.sequence_pointer(n - 1) + last_len * static_cast<int64_t>(o.item);
      if (first != 0 || last_len < 0 || end != static_cast<int64_t>(bin)) {
        return CorruptionAt(o.idx_path, index.pointers_offset(),
                            "its sequences run from byte " + std::to_string(first) + " to byte " +
                                std::to_string(end) + " of " + o.bin_path + ", which has " +
                                std::to_string(bin) +
                                " bytes: the plan takes the token total from the .bin's size, "
                                "which needs the sequences to fill it end to end");
      }
    }
    o.tokens = bin / o.item;
    o.check_contiguous = true;
    totals.tokens = o.tokens;
    // The functions keep the owner alive.
    totals.count_nonempty = [owner] {
      std::call_once(owner->nonempty_once, [&] { owner->CountNonempty(); });
      return owner->nonempty;
    };
    totals.hash_lengths = [owner] {
      std::call_once(owner->hash_once, [&] { owner->ComputeHash(); });
      return owner->hash;
    };
  }
  // The verifier lives inside the owner it checks, so the raw pointer cannot dangle.
  const MegatronLengthsOwner* self = owner.get();
  o.verifier = std::make_unique<ChunkVerifier>(n, kChunkShift,
                                               [self](uint64_t c) { return self->VerifyChunk(c); });
  out.mapped.verifier = o.verifier.get();
  out.totals = std::move(totals);
  return out;
}

}  // namespace stoker
