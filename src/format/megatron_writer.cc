#include "format/megatron_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "common/atomic_file.h"
#include "common/file_util.h"
#include "common/hash.h"
#include "format/megatron_index.h"
#include "format/token_convert.h"

namespace stoker {
namespace {

// Tokens are staged here and written in large blocks: documents are often only a few KB.
constexpr size_t kWriteBufferBytes = 1 << 20;

Status WriteAll(AtomicFile& file, const uint8_t* data, size_t size) {
  const int fd = file.fd();
  const std::string& path = file.temp_path();
#ifdef __linux__
  const off_t start = ::lseek(fd, 0, SEEK_CUR);
#endif
  STOKER_RETURN_IF_ERROR(
      stoker::WriteAll(fd, std::string_view(reinterpret_cast<const char*>(data), size), path));
#ifdef __linux__
  // Starts the write-back of these bytes now, without waiting for it: the disk writes while
  // the pack goes on encoding, and the fsync in Finish has only the last block left to wait for
  // (it was the largest serial part of a pack's last step). Advisory: errors are Finish's.
  if (start >= 0) ::sync_file_range(fd, start, static_cast<off_t>(size), SYNC_FILE_RANGE_WRITE);
#endif
  return Status::OK();
}

template <typename T>
void Put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

}  // namespace

struct MegatronWriter::HashState {
  Xxh3Hasher hasher;
  std::vector<uint8_t> buffer;      // encoded tokens not yet written
  std::unique_ptr<AtomicFile> bin;  // <prefix>.bin until Finish commits it
};

Result<std::unique_ptr<MegatronWriter>> MegatronWriter::Create(const std::string& prefix,
                                                               TokenDType dtype) {
  if (!IsIntegerDType(dtype)) {
    return InvalidArgument("MegatronWriter: token dtype must be an integer type, not " +
                           std::string(TokenDTypeName(dtype)));
  }
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> bin, AtomicFile::Create(prefix + ".bin"));
  auto writer = std::unique_ptr<MegatronWriter>(new MegatronWriter(prefix, dtype));
  writer->bin_hash_->bin = std::move(bin);
  return writer;
}

MegatronWriter::MegatronWriter(std::string prefix, TokenDType dtype)
    : prefix_(std::move(prefix)), dtype_(dtype), bin_hash_(std::make_unique<HashState>()) {
  bin_hash_->buffer.reserve(kWriteBufferBytes);
}

MegatronWriter::~MegatronWriter() = default;  // removes the files Finish did not commit

uint64_t MegatronWriter::bin_bytes() const { return tokens_ * TokenDTypeSize(dtype_); }

Status MegatronWriter::AddDocument(std::span<const int32_t> tokens) {
  const int32_t one =
      static_cast<int32_t>(std::min<size_t>(tokens.size(), std::numeric_limits<int32_t>::max()));
  if (tokens.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return InvalidArgument("MegatronWriter: a document of " + std::to_string(tokens.size()) +
                           " tokens is longer than a Megatron sequence can be (2^31-1)");
  }
  return AddDocument(tokens, std::span<const int32_t>(&one, 1));
}

Status MegatronWriter::AddDocument(std::span<const int32_t> tokens,
                                   std::span<const int32_t> sequence_lengths) {
  if (finished_) return FailedPrecondition("MegatronWriter: AddDocument after Finish");
  uint64_t sum = 0;
  for (int32_t len : sequence_lengths) {
    if (len < 0) return InvalidArgument("MegatronWriter: negative sequence length");
    sum += static_cast<uint64_t>(len);
  }
  if (sum != tokens.size()) {
    return InvalidArgument("MegatronWriter: sequence lengths sum to " + std::to_string(sum) +
                           " but the document has " + std::to_string(tokens.size()) + " tokens");
  }
  // Checked before anything is written, so a rejected document leaves no partial bytes behind.
  // One fast check of the whole document (the pack writer thread checks every token); the
  // per-id loop only to name a bad one.
  const uint64_t max_id = MaxTokenForDType(dtype_);
  const bool fit = TokensFit(tokens.data(), tokens.size(), max_id);
  for (size_t i = 0; !fit && i < tokens.size(); ++i) {
    if (tokens[i] < 0 || static_cast<uint64_t>(tokens[i]) > max_id) {
      return InvalidArgument("MegatronWriter: token id " + std::to_string(tokens[i]) +
                             " at position " + std::to_string(i) + " of document " +
                             std::to_string(lengths_.size()) + " does not fit " +
                             std::string(TokenDTypeName(dtype_)));
    }
  }
  const size_t item = TokenDTypeSize(dtype_);
  std::vector<uint8_t>& buf = bin_hash_->buffer;
  size_t done = 0;
  while (done < tokens.size()) {
    size_t room = (kWriteBufferBytes - buf.size()) / item;
    if (room == 0) {
      STOKER_RETURN_IF_ERROR(WriteAll(*bin_hash_->bin, buf.data(), buf.size()));
      buf.clear();
      continue;
    }
    size_t n = std::min(room, tokens.size() - done);
    size_t old = buf.size();
    buf.resize(old + n * item);
    StoreFittingTokens(tokens.data() + done, n, dtype_, buf.data() + old);  // checked above
    bin_hash_->hasher.Update(buf.data() + old, n * item);
    done += n;
  }
  lengths_.insert(lengths_.end(), sequence_lengths.begin(), sequence_lengths.end());
  document_indices_.push_back(static_cast<int64_t>(lengths_.size()));
  tokens_ += tokens.size();
  return Status::OK();
}

Status MegatronWriter::AddStoredDocuments(std::span<const uint8_t> bytes,
                                          std::span<const uint64_t> lengths) {
  if (finished_) return FailedPrecondition("MegatronWriter: AddDocument after Finish");
  const size_t item = TokenDTypeSize(dtype_);
  uint64_t sum = 0;
  for (uint64_t len : lengths) {
    if (len > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
      return InvalidArgument("MegatronWriter: a document of " + std::to_string(len) +
                             " tokens is longer than a Megatron sequence can be (2^31-1)");
    }
    sum += len;
  }
  if (sum * item != bytes.size()) {
    return InvalidArgument("MegatronWriter: document lengths sum to " + std::to_string(sum) +
                           " tokens but " + std::to_string(bytes.size()) + " bytes were given");
  }
  std::vector<uint8_t>& buf = bin_hash_->buffer;
  bin_hash_->hasher.Update(bytes.data(), bytes.size());
  // Small runs are staged; a large one goes out straight from the caller's memory, after the
  // staged bytes (the order of the file is the order of the calls either way).
  const bool direct = bytes.size() >= kWriteBufferBytes / 8;
  if (!buf.empty() && (direct || buf.size() + bytes.size() > kWriteBufferBytes)) {
    STOKER_RETURN_IF_ERROR(WriteAll(*bin_hash_->bin, buf.data(), buf.size()));
    buf.clear();
  }
  if (direct) {
    STOKER_RETURN_IF_ERROR(WriteAll(*bin_hash_->bin, bytes.data(), bytes.size()));
  } else {
    buf.insert(buf.end(), bytes.begin(), bytes.end());
  }
  for (uint64_t len : lengths) {
    lengths_.push_back(static_cast<int32_t>(len));
    document_indices_.push_back(static_cast<int64_t>(lengths_.size()));
  }
  tokens_ += sum;
  return Status::OK();
}

Result<ShardInfo> MegatronWriter::Finish() {
  if (finished_) return FailedPrecondition("MegatronWriter: Finish called twice");
  HashState& st = *bin_hash_;
  const std::string idx_path = prefix_ + ".idx";
  STOKER_RETURN_IF_ERROR(WriteAll(*st.bin, st.buffer.data(), st.buffer.size()));
  st.buffer.clear();

  const uint64_t n = lengths_.size();
  std::string idx;
  idx.reserve(kMegatronHeaderBytes + 12 * n + 8 * document_indices_.size());
  idx.append(kMegatronMagic, sizeof(kMegatronMagic));
  Put<uint64_t>(idx, kMegatronVersion);
  Put<uint8_t>(idx, static_cast<uint8_t>(dtype_));
  Put<uint64_t>(idx, n);
  Put<uint64_t>(idx, document_indices_.size());  // D + 1: includes the leading 0
  idx.append(reinterpret_cast<const char*>(lengths_.data()), n * sizeof(int32_t));
  const int64_t item = static_cast<int64_t>(TokenDTypeSize(dtype_));
  int64_t pointer = 0;
  for (int32_t len : lengths_) {
    Put<int64_t>(idx, pointer);
    pointer += len * item;
  }
  for (int64_t d : document_indices_) Put<int64_t>(idx, d);

  // Both files are committed once both are written: a failure before leaves neither.
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> idx_file, AtomicFile::Create(idx_path));
  STOKER_RETURN_IF_ERROR(idx_file->Append(idx));
  STOKER_RETURN_IF_ERROR(st.bin->Commit());
  STOKER_RETURN_IF_ERROR(idx_file->Commit());
  finished_ = true;

  ShardInfo info;
  info.prefix = BaseName(prefix_);
  info.documents = n;
  info.tokens = tokens_;
  info.bin_bytes = bin_bytes();
  info.idx_bytes = idx.size();
  info.bin_xxh3 = st.hasher.HexDigest();
  info.idx_xxh3 = Xxh3Hex(Xxh3(idx.data(), idx.size()));
  return info;
}

}  // namespace stoker
