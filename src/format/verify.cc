#include "format/verify.h"

#include <algorithm>

#include "common/file_util.h"
#include "common/hash.h"
#include "common/mapped_file.h"
#include "common/uri.h"
#include "format/dataset_length_index.h"
#include "format/loss_mask.h"
#include "format/manifest.h"
#include "format/megatron_index.h"
#include "format/megatron_source.h"
#include "format/stage_dataset.h"
#include "format/stoker_dataset.h"
#include "format/token_convert.h"
#include "stoker/token_source.h"
#include "storage/open_backend.h"

namespace stoker {
namespace {

// Hashing and token checks walk the data in blocks this big, reporting progress after each.
constexpr uint64_t kBlockBytes = 16ull << 20;

class Checker {
 public:
  Checker(VerifyReport* report, ProgressReporter* progress)
      : report_(report), progress_(progress) {}

  void Problem(const std::string& line) { report_->problems.push_back(line); }
  void Progress(uint64_t items, uint64_t bytes) {
    report_->bytes += bytes;
    if (progress_ != nullptr) progress_->Add(items, bytes);
  }
  void SetTotals(uint64_t items, uint64_t bytes) {
    if (progress_ != nullptr) progress_->SetTotals(items, bytes);
  }

  // Hashes the .bin in blocks while checking its tokens. Returns the hex checksum.
  std::string ScanBin(const MappedFile& bin, TokenDType dtype, uint64_t vocab_size) {
    Xxh3Hasher hasher;
    const uint64_t item = TokenDTypeSize(dtype);
    const uint64_t block = kBlockBytes - kBlockBytes % item;
    std::vector<int64_t> ids(block / item);
    size_t problems = 0;
    for (uint64_t pos = 0; pos < bin.size(); pos += block) {
      uint64_t n = std::min<uint64_t>(block, bin.size() - pos);
      hasher.Update(bin.data() + pos, n);
      uint64_t count = n / item;
      uint64_t done = 0;
      while (done < count && problems < kMaxProblemsPerFile) {
        auto bad =
            DecodeTokens(bin.data() + pos + done * item, dtype, count - done, ids.data() + done);
        uint64_t good_end = bad ? done + *bad : count;
        if (vocab_size > 0) {
          for (uint64_t i = done; i < good_end && problems < kMaxProblemsPerFile; ++i) {
            if (static_cast<uint64_t>(ids[i]) >= vocab_size) {
              Problem(bin.path() + ": at byte " + std::to_string(pos + i * item) + ": token id " +
                      std::to_string(ids[i]) + " is not below the vocabulary size " +
                      std::to_string(vocab_size));
              ++problems;
            }
          }
        }
        if (!bad) break;
        Problem(
            BadTokenStatus(bin.path(), pos, dtype, good_end, bin.data() + pos, "int64").message());
        ++problems;
        done = good_end + 1;
      }
      Progress(0, n);
    }
    return hasher.HexDigest();
  }

  void VerifyShard(const Manifest& m, uint64_t s, const std::string& prefix,
                   const std::string& manifest_path) {
    const ShardInfo& info = m.shards[s];
    const std::string where = " (shard " + std::to_string(s) + " of " + manifest_path + ")";
    auto bin = MappedFile::Open(prefix + ".bin", MappedFile::Access::kSequential);
    auto idx = MappedFile::Open(prefix + ".idx", MappedFile::Access::kSequential);
    bool missing = false;
    for (const auto* f : {&bin, &idx}) {
      if (!f->ok()) {
        Problem(f->status().message() + where);
        missing = true;
      }
    }
    if (missing) {
      Progress(info.documents, 0);
      return;
    }
    report_->files += 2;
    auto size_check = [&](const MappedFile& f, uint64_t expected) {
      if (f.size() != expected) {
        Problem(f.path() + ": size is " + std::to_string(f.size()) +
                " bytes but the manifest says " + std::to_string(expected) + where);
      }
    };
    size_check(**bin, info.bin_bytes);
    size_check(**idx, info.idx_bytes);

    std::string idx_hash = Xxh3Hex(Xxh3((*idx)->data(), (*idx)->size()));
    Progress(0, (*idx)->size());
    if (idx_hash != info.idx_xxh3) {
      Problem((*idx)->path() + ": checksum mismatch: xxh3 is " + idx_hash +
              " but the manifest says " + info.idx_xxh3 + where);
    }
    auto index = MegatronIndex::Parse((*idx)->data(), (*idx)->size(), (*idx)->path(),
                                      (*bin)->size(), (*bin)->path(), MegatronIndex::Checks::kFull);
    if (!index.ok()) {
      Problem(index.status().message());
    } else {
      uint64_t tokens = 0;
      for (uint64_t i = 0; i < index->num_sequences(); ++i) tokens += index->sequence_length(i);
      report_->tokens += tokens;
      report_->documents += index->num_sequences();
      if (index->dtype() != m.dtype) {
        Problem((*idx)->path() + ": token dtype is " + std::string(TokenDTypeName(index->dtype())) +
                " but the manifest says " + std::string(TokenDTypeName(m.dtype)) + where);
      }
      if (index->num_sequences() != info.documents) {
        Problem((*idx)->path() + ": " + std::to_string(index->num_sequences()) +
                " documents but the manifest says " + std::to_string(info.documents) + where);
      }
      if (tokens != info.tokens) {
        Problem((*idx)->path() + ": " + std::to_string(tokens) + " tokens but the manifest says " +
                std::to_string(info.tokens) + where);
      }
      if (tokens * TokenDTypeSize(index->dtype()) != (*bin)->size()) {
        Problem((*bin)->path() + ": " + std::to_string((*bin)->size()) +
                " bytes but its index covers " +
                std::to_string(tokens * TokenDTypeSize(index->dtype())) +
                " (stoker shards have no gaps)" + where);
      }
    }
    TokenDType dtype = index.ok() ? index->dtype() : m.dtype;
    std::string bin_hash = ScanBin(**bin, dtype, m.tokenizer.vocab_size);
    if (bin_hash != info.bin_xxh3) {
      Problem((*bin)->path() + ": checksum mismatch: xxh3 is " + bin_hash +
              " but the manifest says " + info.bin_xxh3 + where);
    }
    Progress(info.documents, 0);
  }

  void VerifyDataset(const std::string& dir) {
    report_->format = "stoker";
    const std::string manifest_path = JoinPath(dir, kManifestFileName);
    Result<Manifest> m = ReadManifest(dir);
    if (!m.ok()) {
      Problem(m.status().message());
      return;
    }
    uint64_t bytes = 0;
    for (const ShardInfo& s : m->shards) bytes += s.bin_bytes + s.idx_bytes;
    SetTotals(m->total_documents(), bytes);
    for (uint64_t s = 0; s < m->shards.size(); ++s) {
      VerifyShard(*m, s, JoinPath(dir, m->shards[s].prefix), manifest_path);
    }
    if (m->length_index) VerifyLengthIndex(dir, *m);
    if (m->loss_mask) VerifyLossMask(dir, *m);
  }

  // Chat data: the loss mask's own dataset (as any dataset), then each document's spans against
  // the document's length, and their total against the manifest.
  void VerifyLossMask(const std::string& dir, const Manifest& m) {
    const std::string mask_dir = JoinPath(dir, m.loss_mask->dataset);
    VerifyReport mask_report;
    Checker(&mask_report, nullptr).VerifyDataset(mask_dir);
    report_->files += mask_report.files;
    report_->bytes += mask_report.bytes;
    for (std::string& p : mask_report.problems) Problem(std::move(p));
    if (!mask_report.ok()) return;
    Result<std::unique_ptr<StokerDataset>> data = StokerDataset::Open(dir);
    if (!data.ok()) return;  // the shards' checks reported it
    Result<std::unique_ptr<StokerDataset>> mask = OpenLossMask(**data);
    if (!mask.ok()) return Problem(mask.status().message());
    std::vector<int32_t> spans;
    uint64_t trained = 0;
    for (uint64_t d = 0; d < (*data)->num_documents(); ++d) {
      spans.resize((*mask)->document_length(d));
      Status st = (*mask)->Read(d, 0, spans.size(), spans.data());
      if (st.ok()) {
        st = CheckSpans(spans, (*data)->document_length(d),
                        mask_dir + " document " + std::to_string(d));
      }
      if (!st.ok()) return Problem(st.message());
      for (size_t i = 0; i + 1 < spans.size(); i += 2) trained += spans[i + 1] - spans[i];
    }
    if (trained != m.loss_mask->trained_tokens) {
      Problem(JoinPath(dir, kManifestFileName) + ": loss_mask.trained_tokens is " +
              std::to_string(m.loss_mask->trained_tokens) + " but the mask trains " +
              std::to_string(trained) + " tokens");
    }
  }

  // The length index: its checksum and totals, then every length against the shards' .idx.
  void VerifyLengthIndex(const std::string& dir, const Manifest& m) {
    Result<std::shared_ptr<const LengthIndex>> index = OpenDatasetLengthIndex(dir, m);
    Status st = index.ok() ? (*index)->Verify() : index.status();
    if (!st.ok()) return Problem(st.message());
    ++report_->files;
    uint64_t doc = 0;
    for (uint64_t s = 0; s < m.shards.size(); ++s) {
      auto shard =
          MegatronSource::Open(JoinPath(dir, m.shards[s].prefix), MegatronIndex::Checks::kHeader);
      if (!shard.ok()) return;  // VerifyShard reported it
      for (uint64_t d = 0; d < (*shard)->num_documents(); ++d, ++doc) {
        if ((*index)->lengths()[doc] != (*shard)->document_length(d)) {
          return Problem((*index)->path() + ": document " + std::to_string(doc) + " has length " +
                         std::to_string((*index)->lengths()[doc]) + " but " +
                         (*shard)->idx_file().path() + " says " +
                         std::to_string((*shard)->document_length(d)) + " (`stoker index " + dir +
                         "` rebuilds it)");
        }
      }
    }
  }

  // Any other format: opening runs its structural checks; then every token is read.
  void VerifySource(const TokenSource& src) {
    report_->format = std::string(src.format());
    report_->files += src.format() == "megatron" ? 2 : 1;
    const uint64_t item = TokenDTypeSize(src.dtype());
    SetTotals(src.num_documents(), src.num_tokens() * item);
    // Opening checked the header only; the whole index is checked here (reads check their own
    // entries too, but not the document index array).
    if (Status st = src.CheckWholeIndex(); !st.ok()) {
      Problem(st.message());
      return;
    }
    const uint64_t chunk = kBlockBytes / 8;
    std::vector<int64_t> ids(chunk);
    size_t problems = 0;
    for (uint64_t d = 0; d < src.num_documents() && problems < kMaxProblemsPerFile; ++d) {
      uint64_t len = src.document_length(d);
      for (uint64_t off = 0; off < len && problems < kMaxProblemsPerFile; off += chunk) {
        uint64_t n = std::min(chunk, len - off);
        Status s = src.Read(d, off, n, ids.data());
        if (!s.ok()) {
          Problem(s.message());
          ++problems;
        }
        Progress(0, n * item);
      }
      report_->documents += 1;
      report_->tokens += len;
      Progress(1, 0);
    }
  }

 private:
  VerifyReport* report_;
  ProgressReporter* progress_;
};

}  // namespace

// A remote dataset is checked on a local copy: the check reads every byte anyway, and so it is
// the same check (stage_dataset.h). Its findings name the remote objects.
Result<VerifyReport> VerifyRemote(const std::string& uri, ProgressReporter* progress) {
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<storage::Backend> backend,
                          storage::OpenBackendForUri(uri));
  STOKER_ASSIGN_OR_RETURN(StagedDataset staged, StageRemoteDataset(*backend, uri));
  STOKER_ASSIGN_OR_RETURN(VerifyReport report, Verify(staged.dir, progress));
  auto rename = [&](std::string text) {
    for (size_t at = text.find(staged.dir); at != std::string::npos;
         at = text.find(staged.dir, at + uri.size())) {
      text.replace(at, staged.dir.size(), uri);
    }
    return text;
  };
  report.path = uri;
  for (std::string& p : report.problems) p = rename(std::move(p));
  return report;
}

Result<VerifyReport> Verify(const std::string& uri, ProgressReporter* progress) {
  STOKER_ASSIGN_OR_RETURN(const ParsedUri parsed, ParseUri(uri));
  if (parsed.kind != UriKind::kFile) return VerifyRemote(uri, progress);
  const std::string& path = parsed.path;
  VerifyReport report;
  report.path = path;
  Checker checker(&report, progress);
  if (IsDirectory(path) && PathExists(JoinPath(path, kManifestFileName))) {
    checker.VerifyDataset(path);
    return report;
  }
  Result<std::unique_ptr<TokenSource>> src = OpenTokenSource(path);
  if (!src.ok()) {
    // Damage found while opening is a finding; a missing path or unknown format is an error.
    if (src.status().code() != StatusCode::kCorruption) return src.status();
    report.problems.push_back(src.status().message());
    return report;
  }
  checker.VerifySource(**src);
  return report;
}

}  // namespace stoker
