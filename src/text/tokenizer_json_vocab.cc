#include "text/tokenizer_json_vocab.h"

#include <algorithm>

#include "text/tokenizer_json.h"

namespace stoker {

ByteLevelDecoder::ByteLevelDecoder() {
  reverse_.fill(-1);
  for (int b = 0; b < 256; ++b) reverse_[ByteLevelChar(static_cast<uint8_t>(b))] = b;
}

bool ByteLevelDecoder::Decode(std::string_view s, std::string* out) const {
  out->clear();
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    char32_t cp;
    if (c < 0x80) {
      cp = c;
      i += 1;
    } else if ((c & 0xE0) == 0xC0 && i + 1 < s.size()) {
      cp = (static_cast<char32_t>(c & 0x1F) << 6) | (s[i + 1] & 0x3F);
      i += 2;
    } else {
      return false;  // every byte-level character is below U+0800
    }
    if (cp >= reverse_.size() || reverse_[cp] < 0) return false;
    out->push_back(static_cast<char>(reverse_[cp]));
  }
  return true;
}

Status JsonVocab::Fail(std::string_view field, std::string_view message) const {
  return InvalidArgument(std::string(origin_) + ": " + std::string(field) + ": " +
                         std::string(message));
}

Status JsonVocab::Add(std::string_view key, uint64_t id) {
  auto field = [&] { return "model.vocab[\"" + std::string(key) + "\"]"; };
  if (id >= static_cast<uint64_t>(INT32_MAX)) {
    return Fail(field(), "must be an id below 2^31-1 (the vocabulary must fit int32)");
  }
  if (id >= tokens_.size()) {
    tokens_.resize(id + 1);
    seen_.resize(id + 1, false);
  }
  if (seen_[id]) return Fail(field(), "duplicate id " + std::to_string(id));
  if (!index_.Insert(key, static_cast<int32_t>(id))) return Fail(field(), "duplicate key");
  seen_[id] = true;
  if (bytes_of_.Decode(key, &raw_)) tokens_[id] = raw_;
  return Status::OK();
}

// In windows of merges: the three keys of each are hashed and their slots prefetched, then their
// keys' bytes, then they are looked up (one at a time, each lookup was two cache misses).
Status JsonVocab::AddMerges(std::span<const MergeText> merges, size_t first_index) {
  constexpr size_t kWindow = 32;
  struct Hashes {
    uint64_t left, right, joined;
    uint32_t joined_at;  // in joined_
  };
  Hashes h[kWindow];
  merges_.reserve(merges_.size() + merges.size());
  for (size_t start = 0; start < merges.size(); start += kWindow) {
    const size_t n = std::min(kWindow, merges.size() - start);
    joined_.clear();
    for (size_t k = 0; k < n; ++k) {
      const auto& [a, b] = merges[start + k];
      h[k].joined_at = static_cast<uint32_t>(joined_.size());
      joined_.append(a).append(b);
      h[k].left = VocabIndex::Hash(a);
      h[k].right = VocabIndex::Hash(b);
      h[k].joined = VocabIndex::Hash(std::string_view(joined_).substr(h[k].joined_at));
      index_.Prefetch(h[k].left);
      index_.Prefetch(h[k].right);
      index_.Prefetch(h[k].joined);
    }
    for (size_t k = 0; k < n; ++k) {
      index_.PrefetchKey(h[k].left);
      index_.PrefetchKey(h[k].right);
      index_.PrefetchKey(h[k].joined);
    }
    for (size_t k = 0; k < n; ++k) {
      const auto& [a, b] = merges[start + k];
      const std::string_view ab(joined_.data() + h[k].joined_at, a.size() + b.size());
      const int32_t ia = index_.FindHashed(a, h[k].left), ib = index_.FindHashed(b, h[k].right);
      const int32_t im = ia < 0 || ib < 0 ? -1 : index_.FindHashed(ab, h[k].joined);
      const size_t index = first_index + start + k;
      if (im < 0 || tokens_[ia].empty() || tokens_[ib].empty()) {  // an error: say which
        const std::string at = "model.merges[" + std::to_string(index) + "]";
        if (ia < 0) return Fail(at, "the token '" + std::string(a) + "' is not in model.vocab");
        if (ib < 0) return Fail(at, "the token '" + std::string(b) + "' is not in model.vocab");
        if (im < 0) {
          return Fail(at, "the merged token '" + std::string(ab) + "' is not in model.vocab");
        }
        return Fail(at, "the tokens are not byte-level (a character outside its alphabet)");
      }
      merges_.push_back({ia, ib, static_cast<uint32_t>(index), im});
    }
  }
  return Status::OK();
}

Result<BpeModel> JsonVocab::Build() {
  Result<BpeModel> m = BpeModel::Build(tokens_, merges_);
  if (!m.ok()) return Fail("model.merges", m.status().message());
  return m;
}

}  // namespace stoker
