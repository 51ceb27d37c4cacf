#include "format/inspect.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/human_size.h"
#include "common/progress.h"
#include "format/loss_mask.h"
#include "format/stoker_dataset.h"

namespace stoker {
namespace {

// Bucket 0 holds empty documents; bucket k >= 1 holds lengths in [2^(k-1), 2^k - 1].
size_t BucketOf(uint64_t length) { return length == 0 ? 0 : std::bit_width(length); }

LengthBucket BucketRange(size_t k) {
  if (k == 0) return {0, 0, 0};
  uint64_t lo = 1ull << (k - 1);
  return {lo, k == 64 ? ~0ull : (lo << 1) - 1, 0};
}

}  // namespace

InspectSummary Inspect(const TokenSource& source) {
  InspectSummary s;
  s.path = source.path();
  s.format = std::string(source.format());
  s.dtype = source.dtype();
  s.shards = source.num_shards();
  s.documents = source.num_documents();
  s.tokens = source.num_tokens();
  s.tokenizer = source.tokenizer_info();
  if (const auto* dataset = dynamic_cast<const StokerDataset*>(&source);
      dataset != nullptr && dataset->manifest().loss_mask) {
    s.trained_tokens = dataset->manifest().loss_mask->trained_tokens;
  }
  std::vector<uint64_t> counts(65, 0);
  uint64_t total = 0;
  s.min_length = s.documents > 0 ? ~0ull : 0;
  for (uint64_t d = 0; d < s.documents; ++d) {
    uint64_t len = source.document_length(d);
    s.min_length = std::min(s.min_length, len);
    s.max_length = std::max(s.max_length, len);
    total += len;
    ++counts[BucketOf(len)];
  }
  s.mean_length = s.documents > 0 ? static_cast<double>(total) / s.documents : 0;
  // The buckets from the first non-empty one to the last.
  auto nonempty = [](uint64_t c) { return c != 0; };
  const size_t first = std::find_if(counts.begin(), counts.end(), nonempty) - counts.begin();
  const size_t end = counts.rend() - std::find_if(counts.rbegin(), counts.rend(), nonempty);
  for (size_t k = first; k < end; ++k) {
    LengthBucket b = BucketRange(k);
    b.documents = counts[k];
    s.histogram.push_back(b);
  }
  return s;
}

std::string InspectSummary::ToJson() const {
  nlohmann::ordered_json j;
  j["path"] = path;
  j["format"] = format;
  j["dtype"] = TokenDTypeName(dtype);
  j["shards"] = shards;
  j["documents"] = documents;
  j["tokens"] = tokens;
  if (tokenizer) {
    j["tokenizer"] = {{"kind", tokenizer->kind},
                      {"name", tokenizer->name},
                      {"vocab_size", tokenizer->vocab_size},
                      {"eos_id", tokenizer->eos_id}};
  } else {
    j["tokenizer"] = nullptr;
  }
  if (trained_tokens) {
    j["trained_tokens"] = *trained_tokens;
    j["trained_share"] = tokens > 0 ? static_cast<double>(*trained_tokens) / tokens : 0.0;
  }
  j["document_length"] = {{"min", min_length}, {"mean", mean_length}, {"max", max_length}};
  nlohmann::ordered_json hist = nlohmann::ordered_json::array();
  for (const LengthBucket& b : histogram) {
    hist.push_back(
        {{"min_length", b.min_length}, {"max_length", b.max_length}, {"documents", b.documents}});
  }
  j["histogram"] = hist;
  return j.dump(2) + "\n";
}

std::string InspectSummary::ToText() const {
  std::string out;
  char buf[256];
  auto line = [&](const char* key, const std::string& value) {
    std::snprintf(buf, sizeof(buf), "%-12s %s\n", key, value.c_str());
    out += buf;
  };
  line("path", path);
  line("format", format);
  line("dtype", std::string(TokenDTypeName(dtype)) + " (" + std::to_string(TokenDTypeSize(dtype)) +
                    " bytes per token)");
  line("shards", FormatCount(shards));
  line("documents", FormatCount(documents));
  line("tokens", FormatCount(tokens) + " (" + FormatSize(tokens * TokenDTypeSize(dtype)) + ")");
  if (trained_tokens) {
    std::snprintf(buf, sizeof(buf), "%s (%.1f%% of the tokens; chat data, loss mask)",
                  FormatCount(*trained_tokens).c_str(),
                  tokens > 0 ? 100.0 * static_cast<double>(*trained_tokens) / tokens : 0.0);
    line("trained", buf);
  }
  if (tokenizer) {
    const TokenizerInfo& t = *tokenizer;
    line("tokenizer", t.kind + (t.name.empty() || t.name == t.kind ? "" : " " + t.name) +
                          ", vocab " + FormatCount(t.vocab_size) + ", eos " +
                          std::to_string(t.eos_id));
  } else {
    line("tokenizer", "unknown (not recorded in this format)");
  }
  std::snprintf(buf, sizeof(buf), "min %llu, mean %.1f, max %llu",
                static_cast<unsigned long long>(min_length), mean_length,
                static_cast<unsigned long long>(max_length));
  line("doc length", buf);
  if (!histogram.empty()) {
    out += "length histogram (tokens per document):\n";
    uint64_t peak = 0;
    for (const LengthBucket& b : histogram) peak = std::max(peak, b.documents);
    for (const LengthBucket& b : histogram) {
      std::string range = std::to_string(b.min_length) + "-" + std::to_string(b.max_length);
      int bar = peak == 0 ? 0 : static_cast<int>((b.documents * 40 + peak - 1) / peak);
      std::snprintf(buf, sizeof(buf), "  %23s %14s  %s\n", range.c_str(),
                    FormatCount(b.documents).c_str(), std::string(bar, '#').c_str());
      out += buf;
    }
  }
  return out;
}

namespace {

Status CheckDocument(const TokenSource& source, uint64_t doc) {
  if (doc >= source.num_documents()) {
    return OutOfRange("document " + std::to_string(doc) + " does not exist in " + source.path() +
                      " (it has " + std::to_string(source.num_documents()) + " documents)");
  }
  return Status::OK();
}

template <typename T>
void AppendJsonArray(const std::vector<T>& values, std::string* out) {
  *out += "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) *out += ",";
    *out += std::to_string(values[i]);
  }
  *out += "]";
}

}  // namespace

Result<std::string> DocumentToJson(const TokenSource& source, uint64_t doc,
                                   const DocumentReader* loss_mask) {
  STOKER_RETURN_IF_ERROR(CheckDocument(source, doc));
  std::vector<int64_t> ids(source.document_length(doc));
  STOKER_RETURN_IF_ERROR(source.Read(doc, 0, ids.size(), ids.data()));
  std::string out;
  if (loss_mask == nullptr) {
    AppendJsonArray(ids, &out);
    return out;
  }
  std::vector<uint8_t> mask(ids.size());
  std::vector<int32_t> scratch;
  STOKER_RETURN_IF_ERROR(
      ReadLossMask(*loss_mask, doc, ids.size(), 0, ids.size(), mask.data(), &scratch));
  uint64_t trained = 0;
  for (uint8_t m : mask) trained += m;
  out = "{\"tokens\": ";
  AppendJsonArray(ids, &out);
  out += ", \"loss_mask\": ";
  AppendJsonArray(mask, &out);
  return out + ", \"trained_tokens\": " + std::to_string(trained) + "}";
}

Result<MarkedDocument> MarkTrainedText(
    const TokenSource& source, uint64_t doc, const DocumentReader& loss_mask,
    const std::function<Result<std::string>(const std::vector<int32_t>&)>& decode,
    std::string_view open, std::string_view close) {
  STOKER_RETURN_IF_ERROR(CheckDocument(source, doc));
  MarkedDocument out;
  out.tokens = source.document_length(doc);
  std::vector<int32_t> ids(out.tokens);
  STOKER_RETURN_IF_ERROR(source.Read(doc, 0, ids.size(), ids.data()));
  std::vector<uint8_t> mask(ids.size());
  std::vector<int32_t> scratch;
  STOKER_RETURN_IF_ERROR(
      ReadLossMask(loss_mask, doc, ids.size(), 0, ids.size(), mask.data(), &scratch));
  // Runs of equal mask values are decoded whole, so that a character split across tokens of one
  // run stays whole.
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j < ids.size() && mask[j] == mask[i]) ++j;
    STOKER_ASSIGN_OR_RETURN(std::string text,
                            decode(std::vector<int32_t>(ids.begin() + i, ids.begin() + j)));
    if (mask[i] != 0) {
      out.text.append(open).append(text).append(close);
      out.trained_tokens += j - i;
    } else {
      out.text += text;
    }
    i = j;
  }
  return out;
}

}  // namespace stoker
