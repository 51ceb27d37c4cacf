#include "format/megatron_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "common/file_util.h"
#include "common/hash.h"
#include "format/megatron_index.h"
#include "format/token_convert.h"

namespace stoker {
namespace {

// Tokens are staged here and written in large blocks: documents are often only a few KB.
constexpr size_t kWriteBufferBytes = 1 << 20;

Status WriteAll(int fd, const uint8_t* data, size_t size, const std::string& path) {
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
  std::vector<uint8_t> buffer;  // encoded tokens not yet written
  std::string bin_tmp;
  std::string idx_tmp;
};

Result<std::unique_ptr<MegatronWriter>> MegatronWriter::Create(const std::string& prefix,
                                                               TokenDType dtype) {
  if (!IsIntegerDType(dtype)) {
    return InvalidArgument("MegatronWriter: token dtype must be an integer type, not " +
                           std::string(TokenDTypeName(dtype)));
  }
  std::string bin_tmp = prefix + ".bin.tmp";
  int fd = ::open(bin_tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("create " + bin_tmp, errno);
  auto writer = std::unique_ptr<MegatronWriter>(new MegatronWriter(prefix, dtype, fd));
  writer->bin_hash_->bin_tmp = bin_tmp;
  writer->bin_hash_->idx_tmp = prefix + ".idx.tmp";
  return writer;
}

MegatronWriter::MegatronWriter(std::string prefix, TokenDType dtype, int bin_fd)
    : prefix_(std::move(prefix)),
      dtype_(dtype),
      bin_fd_(bin_fd),
      bin_hash_(std::make_unique<HashState>()) {
  bin_hash_->buffer.reserve(kWriteBufferBytes);
}

MegatronWriter::~MegatronWriter() {
  if (bin_fd_ >= 0) ::close(bin_fd_);
  if (!finished_) {
    ::unlink(bin_hash_->bin_tmp.c_str());
    ::unlink(bin_hash_->idx_tmp.c_str());
  }
}

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
      STOKER_RETURN_IF_ERROR(WriteAll(bin_fd_, buf.data(), buf.size(), bin_hash_->bin_tmp));
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
    STOKER_RETURN_IF_ERROR(WriteAll(bin_fd_, buf.data(), buf.size(), bin_hash_->bin_tmp));
    buf.clear();
  }
  if (direct) {
    STOKER_RETURN_IF_ERROR(WriteAll(bin_fd_, bytes.data(), bytes.size(), bin_hash_->bin_tmp));
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
  const std::string bin_path = prefix_ + ".bin";
  const std::string idx_path = prefix_ + ".idx";
  STOKER_RETURN_IF_ERROR(WriteAll(bin_fd_, st.buffer.data(), st.buffer.size(), st.bin_tmp));
  st.buffer.clear();
  if (::fsync(bin_fd_) != 0) return ErrnoStatus("fsync " + st.bin_tmp, errno);
  int fd = bin_fd_;
  bin_fd_ = -1;
  if (::close(fd) != 0) return ErrnoStatus("close " + st.bin_tmp, errno);

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

  // WriteFileAtomically would rename to the final name; the .tmp is written the same way here
  // and both files are renamed together below.
  int ifd = ::open(st.idx_tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (ifd < 0) return ErrnoStatus("create " + st.idx_tmp, errno);
  Status s = WriteAll(ifd, reinterpret_cast<const uint8_t*>(idx.data()), idx.size(), st.idx_tmp);
  if (s.ok() && ::fsync(ifd) != 0) s = ErrnoStatus("fsync " + st.idx_tmp, errno);
  if (::close(ifd) != 0 && s.ok()) s = ErrnoStatus("close " + st.idx_tmp, errno);
  STOKER_RETURN_IF_ERROR(s);

  if (::rename(st.bin_tmp.c_str(), bin_path.c_str()) != 0) {
    return ErrnoStatus("rename " + st.bin_tmp + " to " + bin_path, errno);
  }
  if (::rename(st.idx_tmp.c_str(), idx_path.c_str()) != 0) {
    return ErrnoStatus("rename " + st.idx_tmp + " to " + idx_path, errno);
  }
  finished_ = true;
  STOKER_RETURN_IF_ERROR(FsyncDirectory(DirName(prefix_)));

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
