// Option names, DatasetLengths from a TokenSource, and small value helpers of stoker/plan.h.
#include <cstdio>
#include <string>

#include "format/megatron_source.h"
#include "format/stoker_dataset.h"
#include "plan/mapped_lengths.h"
#include "plan/megatron_totals.h"
#include "stoker/plan.h"

namespace stoker {
namespace {

// A stoker dataset without a length index and at least this many documents gets a note.
constexpr uint64_t kLargeWithoutIndex = uint64_t{1} << 20;

template <typename T, size_t N>
Result<T> ParseName(std::string_view what, std::string_view name,
                    const std::pair<std::string_view, T> (&table)[N]) {
  std::string accepted;
  for (const auto& [n, v] : table) {
    if (n == name) return v;
    accepted += (accepted.empty() ? "" : ", ") + std::string(n);
  }
  return InvalidArgument("unknown " + std::string(what) + " '" + std::string(name) +
                         "' (expected one of: " + accepted + ")");
}

constexpr std::pair<std::string_view, ShuffleMode> kShuffleNames[] = {
    {"global", ShuffleMode::kGlobal}, {"block", ShuffleMode::kBlock}, {"none", ShuffleMode::kNone}};
constexpr std::pair<std::string_view, PackMode> kPackNames[] = {
    {"concat", PackMode::kConcat}, {"bestfit", PackMode::kBestFit}, {"pad", PackMode::kPad}};
constexpr std::pair<std::string_view, RemainderPolicy> kRemainderNames[] = {
    {"drop_last", RemainderPolicy::kDropLast}, {"pad", RemainderPolicy::kPad}};

template <typename T, size_t N>
std::string_view NameOf(T value, const std::pair<std::string_view, T> (&table)[N]) {
  for (const auto& [n, v] : table) {
    if (v == value) return n;
  }
  return "unknown";
}

}  // namespace

std::string_view ShuffleModeName(ShuffleMode mode) { return NameOf(mode, kShuffleNames); }
std::string_view PackModeName(PackMode mode) { return NameOf(mode, kPackNames); }
std::string_view RemainderPolicyName(RemainderPolicy p) { return NameOf(p, kRemainderNames); }
Result<ShuffleMode> ParseShuffleMode(std::string_view name) {
  return ParseName("shuffle mode", name, kShuffleNames);
}
Result<PackMode> ParsePackMode(std::string_view name) {
  return ParseName("pack mode", name, kPackNames);
}
Result<RemainderPolicy> ParseRemainderPolicy(std::string_view name) {
  return ParseName("remainder policy", name, kRemainderNames);
}

Result<DatasetLengths> DatasetLengths::FromTokenSource(const TokenSource& source) {
  DatasetLengths out;
  out.name = source.path();
  const uint64_t n = source.num_documents();
  const uint64_t shards = source.num_shards();
  out.shard_first_document.resize(shards + 1);
  for (uint64_t s = 0; s <= shards; ++s) {
    out.shard_first_document[s] = source.shard_first_document(s);
  }
  // Read in place where the lengths lie in a mapped array: no per-document private memory.
  if (const auto* ds = dynamic_cast<const StokerDataset*>(&source);
      ds != nullptr && ds->length_index() != nullptr) {
    DatasetLengths mapped = plan::LengthsFromIndex(ds->length_index(), source.path());
    // The source's boundaries, which the dataset checked against the index at open.
    mapped.shard_first_document = std::move(out.shard_first_document);
    return mapped;
  }
  if (const auto* mg = dynamic_cast<const MegatronSource*>(&source); mg != nullptr) {
    if (mg->nonempty_documents()) {  // counted while the source validated every entry
      std::shared_ptr<const MappedFile> idx = mg->shared_idx_file();
      out.mapped = {idx->data() + kMegatronHeaderBytes, n, MappedLengths::Element::kInt32, idx};
      out.totals = LengthTotals{mg->num_tokens(), *mg->nonempty_documents(), std::nullopt, {}, {}};
      return out;
    }
    // O(1): the total from the .bin's size, the rest when first needed (megatron_totals.h).
    STOKER_ASSIGN_OR_RETURN(DatasetLengths mapped, plan::MegatronLengths(*mg));
    mapped.name = std::move(out.name);
    mapped.shard_first_document = std::move(out.shard_first_document);
    return mapped;
  }
  if (const auto* ds = dynamic_cast<const StokerDataset*>(&source);
      ds != nullptr && n >= kLargeWithoutIndex) {
    std::fprintf(stderr,
                 "stoker: note: %s has no length index; the plan copies its %llu lengths into "
                 "memory (8 bytes each, in every process). `stoker index %s` writes one.\n",
                 source.path().c_str(), static_cast<unsigned long long>(n), source.path().c_str());
  }
  out.document_lengths.resize(n);
  source.DocumentLengths(0, n, out.document_lengths.data());
  return out;
}

uint64_t Row::num_tokens() const {
  uint64_t n = 0;
  for (const RowPiece& p : pieces) n += p.length;
  return n;
}

double PackingStats::real_token_share() const {
  uint64_t capacity = real_tokens + padding_tokens;
  return capacity ? static_cast<double>(real_tokens) / capacity : 0;
}

double PackingStats::padding_share() const {
  uint64_t capacity = real_tokens + padding_tokens;
  return capacity ? static_cast<double>(padding_tokens) / capacity : 0;
}

}  // namespace stoker
