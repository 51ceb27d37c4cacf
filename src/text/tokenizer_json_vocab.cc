#include "text/tokenizer_json_vocab.h"

#include <algorithm>
#include <array>

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

Status JsonFields::Fail(std::string_view field, std::string_view message) const {
  return InvalidArgument(std::string(origin) + ": " + std::string(field) + ": " +
                         std::string(message));
}

Status JsonVocab::Add(std::string_view key, uint64_t id) {
  auto field = [&] { return "model.vocab[\"" + std::string(key) + "\"]"; };
  if (id >= static_cast<uint64_t>(INT32_MAX)) {
    return file_.Fail(field(), "must be an id below 2^31-1 (the vocabulary must fit int32)");
  }
  if (id >= tokens_.size()) {
    tokens_.resize(id + 1);
    state_.resize(id + 1, 0);
  }
  if (state_[id] != 0) return file_.Fail(field(), "duplicate id " + std::to_string(id));
  if (index_.key_bytes() + key.size() > UINT32_MAX) {
    return file_.Fail("model.vocab", "its keys add up to more than 4 GiB");
  }
  if (!index_.Insert(key, static_cast<int32_t>(id))) return file_.Fail(field(), "duplicate key");
  state_[id] = 1;
  if (bytes_of_.Decode(key, &raw_)) {
    tokens_[id] = raw_;
    state_[id] = raw_.empty() ? 1 : 2;  // "" decodes, but has no bytes: as before, not byte-level
  }
  return Status::OK();
}

// The lookups are memory-bound (a slot and a key's bytes, each a likely cache miss), so they are
// pipelined: merge i + kAhead is hashed and its three slots prefetched, the keys in the slots of
// merge i + kKeyAhead are prefetched (their slots are in the cache by then), and merge i is
// looked up. With blocks of 32 merges prefetched at once, a third of the time was still the
// first read of a slot.
Status JsonVocab::AddMerges(std::span<const MergeText> merges, size_t first_index) {
  constexpr size_t kAhead = 16, kKeyAhead = 8, kRing = 32;  // kRing > kAhead
  struct Pending {
    uint64_t left, right, joined;
    std::string ab;  // left + right
  };
  std::array<Pending, kRing> ring;
  auto prepare = [&](size_t i) {
    Pending& p = ring[i % kRing];
    const auto& [a, b] = merges[i];
    p.ab.assign(a).append(b);
    p.left = VocabIndex::Hash(a);
    p.right = VocabIndex::Hash(b);
    p.joined = VocabIndex::Hash(p.ab);
    index_.Prefetch(p.left);
    index_.Prefetch(p.right);
    index_.Prefetch(p.joined);
  };
  const size_t n = merges.size();
  for (size_t i = 0; i < std::min(kAhead, n); ++i) prepare(i);
  merges_.reserve(merges_.size() + n);
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) prepare(i + kAhead);
    if (i + kKeyAhead < n) {
      const Pending& q = ring[(i + kKeyAhead) % kRing];
      index_.PrefetchKey(q.left);
      index_.PrefetchKey(q.right);
      index_.PrefetchKey(q.joined);
    }
    const Pending& p = ring[i % kRing];
    const auto& [a, b] = merges[i];
    const int32_t ia = index_.FindHashed(a, p.left), ib = index_.FindHashed(b, p.right);
    const int32_t im = ia < 0 || ib < 0 ? -1 : index_.FindHashed(p.ab, p.joined);
    if (im < 0 || state_[ia] != 2 || state_[ib] != 2) {  // an error: say which
      const std::string at = "model.merges[" + std::to_string(first_index + i) + "]";
      if (ia < 0) return file_.Fail(at, "the token '" + std::string(a) + "' is not in model.vocab");
      if (ib < 0) return file_.Fail(at, "the token '" + std::string(b) + "' is not in model.vocab");
      if (im < 0) return file_.Fail(at, "the merged token '" + p.ab + "' is not in model.vocab");
      return file_.Fail(at, "the tokens are not byte-level (a character outside its alphabet)");
    }
    merges_.push_back({ia, ib, static_cast<uint32_t>(first_index + i), im});
  }
  return Status::OK();
}

void JsonVocab::UseRawKeys() {
  index_.ForEach([&](std::string_view key, int32_t id) {
    tokens_[static_cast<size_t>(id)].assign(key);
    state_[static_cast<size_t>(id)] = key.empty() ? 1 : 2;
  });
}

Result<BpeModel> JsonVocab::Build() {
  Result<BpeModel> m = BpeModel::Build(tokens_, merges_);
  if (!m.ok()) return file_.Fail("model.merges", m.status().message());
  return m;
}

}  // namespace stoker
