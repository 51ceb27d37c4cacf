#include "plan/best_fit.h"

#include <algorithm>
#include <bit>

namespace stoker::plan {
namespace {

// Open bins by room left: a stack of bins per room value (linked through next_) and a bitset of
// the room values that have a bin, so the tightest fit is a find-next-set-bit.
class RoomIndex {
 public:
  explicit RoomIndex(uint64_t capacity)
      : head_(capacity + 1, -1),
        bits_((capacity + 1 + 63) / 64, 0),
        summary_((bits_.size() + 63) / 64, 0) {}

  // The smallest room >= len that has a bin, or -1.
  int64_t FindFit(uint64_t len) const {
    size_t word = len >> 6;
    if (word >= bits_.size()) return -1;
    uint64_t w = bits_[word] & (~uint64_t{0} << (len & 63));
    if (w != 0) return static_cast<int64_t>(word * 64 + std::countr_zero(w));
    // The next non-empty word, through the summary (one bit per word of bits_).
    size_t next = word + 1;
    size_t s = next >> 6;
    if (s >= summary_.size()) return -1;
    uint64_t sw = summary_[s] & (next & 63 ? ~uint64_t{0} << (next & 63) : ~uint64_t{0});
    while (sw == 0) {
      if (++s == summary_.size()) return -1;
      sw = summary_[s];
    }
    word = s * 64 + std::countr_zero(sw);
    return static_cast<int64_t>(word * 64 + std::countr_zero(bits_[word]));
  }
  uint32_t Pop(uint64_t room) {
    int32_t bin = head_[room];
    head_[room] = next_[bin];
    if (head_[room] < 0) {
      bits_[room >> 6] &= ~(uint64_t{1} << (room & 63));
      if (bits_[room >> 6] == 0) summary_[room >> 12] &= ~(uint64_t{1} << ((room >> 6) & 63));
    }
    return static_cast<uint32_t>(bin);
  }
  void Push(uint64_t room, uint32_t bin) {
    if (next_.size() <= bin) next_.resize(bin + 1, -1);
    next_[bin] = head_[room];
    head_[room] = static_cast<int32_t>(bin);
    bits_[room >> 6] |= uint64_t{1} << (room & 63);
    summary_[room >> 12] |= uint64_t{1} << ((room >> 6) & 63);
  }

 private:
  std::vector<int32_t> head_;
  std::vector<int32_t> next_;
  std::vector<uint64_t> bits_;
  std::vector<uint64_t> summary_;
};

}  // namespace

uint64_t BestFitDecreasing(const std::vector<uint64_t>& lengths, uint64_t capacity,
                           std::vector<uint32_t>* bin_of_item, uint64_t max_items) {
  // One 64-bit key per item sorts by length descending, then index ascending (capacity < 2^32
  // and fewer than 2^32 items, checked by Plan::Create).
  std::vector<uint64_t> keys(lengths.size());
  for (size_t i = 0; i < lengths.size(); ++i) keys[i] = (capacity - lengths[i]) << 32 | i;
  std::sort(keys.begin(), keys.end());
  bin_of_item->assign(lengths.size(), 0);
  RoomIndex open(capacity);
  uint32_t bins = 0;
  std::vector<uint32_t> items_in;  // per bin, only with max_items
  for (uint64_t key : keys) {
    uint32_t item = static_cast<uint32_t>(key);
    uint64_t len = lengths[item];
    int64_t fit = open.FindFit(len);
    uint32_t bin;
    uint64_t room;
    if (fit < 0) {
      bin = bins++;
      room = capacity - len;
    } else {
      bin = open.Pop(static_cast<uint64_t>(fit));
      room = static_cast<uint64_t>(fit) - len;
    }
    (*bin_of_item)[item] = bin;
    if (max_items > 0) {
      if (items_in.size() <= bin) items_in.resize(bin + 1, 0);
      if (++items_in[bin] >= max_items) continue;  // closed: it takes no more items
    }
    if (room > 0) open.Push(room, bin);
  }
  return bins;
}

}  // namespace stoker::plan
