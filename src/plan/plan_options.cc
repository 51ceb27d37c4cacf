// Option names and small value helpers of stoker/plan.h.
#include <cstdio>
#include <string>

#include "plan/plan_impl.h"
#include "stoker/plan.h"

namespace stoker {
namespace {

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

constexpr std::pair<std::string_view, LongDocuments> kLongDocumentNames[] = {
    {"auto", LongDocuments::kAuto},
    {"split", LongDocuments::kSplit},
    {"drop", LongDocuments::kDrop},
    {"truncate", LongDocuments::kTruncate}};

constexpr std::pair<std::string_view, BalanceMode> kBalanceNames[] = {
    {"tokens", BalanceMode::kTokens},
    {"attention", BalanceMode::kAttention},
    {"none", BalanceMode::kNone}};

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
std::string_view LongDocumentsName(LongDocuments p) { return NameOf(p, kLongDocumentNames); }
Result<LongDocuments> ParseLongDocuments(std::string_view name) {
  return ParseName("long-documents policy", name, kLongDocumentNames);
}

std::string_view BalanceModeName(BalanceMode m) { return NameOf(m, kBalanceNames); }
Result<BalanceMode> ParseBalanceMode(std::string_view name) {
  return ParseName("balance", name, kBalanceNames);
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

namespace plan {

Status CheckDocumentPadding(const PlanOptions& o) {
  if (o.max_documents_per_row > 0 && o.pack == PackMode::kConcat) {
    return InvalidArgument("max_documents_per_row=" + std::to_string(o.max_documents_per_row) +
                           " needs pack='bestfit' or 'pad': pack='concat' cuts rows at fixed "
                           "token offsets and cannot close a row early");
  }
  if (o.max_documents_per_row >= (uint64_t{1} << 31)) {
    return InvalidArgument("max_documents_per_row must be below 2^31");
  }
  const uint64_t m = o.pad_each_document_to;
  if (m <= 1) return Status::OK();
  const std::string what = "pad_each_document_to=" + std::to_string(m);
  if (m >= (uint64_t{1} << 31)) return InvalidArgument(what + " must be below 2^31");
  if (o.pack == PackMode::kConcat) {
    return InvalidArgument(what +
                           " needs pack='bestfit' or 'pad': pack='concat' cuts documents "
                           "at row ends and leaves no room to pad them");
  }
  if (o.seq_len % m != 0) {
    return InvalidArgument(what + " needs a seq_len that is a multiple of it (seq_len is " +
                           std::to_string(o.seq_len) + ")");
  }
  return Status::OK();
}

}  // namespace plan
}  // namespace stoker
