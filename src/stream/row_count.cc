#include "stream/row_count.h"

#include <algorithm>

#include "plan/best_fit.h"

namespace stoker::stream {
namespace {

// Best fit of chunks that take `rooms` (their lengths, padded) in rows of c.seq_len, as the
// plan packs them (dataset_stream.cc): the number of rows, each chunk's row in *bin.
uint64_t PackStreamChunks(const std::vector<uint64_t>& rooms, const StreamConfig& c,
                          std::vector<uint32_t>* bin) {
  return plan::BestFitDecreasing(rooms, c.seq_len, bin, c.max_documents_per_row);
}

}  // namespace

std::vector<std::vector<WindowChunk>> BestFitWindow(
    const std::vector<std::pair<uint64_t, uint64_t>>& spans, const StreamConfig& c) {
  const uint64_t seq_len = c.seq_len;
  std::vector<uint64_t> rooms;
  std::vector<WindowChunk> items;
  for (size_t i = 0; i < spans.size(); ++i) {
    for (uint64_t off = spans[i].first; off < spans[i].second; off += seq_len) {
      items.push_back({i, off, std::min(seq_len, spans[i].second - off)});
      rooms.push_back(PaddedLength(items.back().length, c.pad_each_document_to));
    }
  }
  std::vector<uint32_t> bin;
  std::vector<std::vector<WindowChunk>> rows(PackStreamChunks(rooms, c, &bin));
  for (size_t k = 0; k < items.size(); ++k) rows[bin[k]].push_back(items[k]);
  return rows;
}

uint64_t CountRows(const StreamConfig& c, uint64_t rng, const std::vector<uint64_t>& initial,
                   const std::vector<uint32_t>& all) {
  const uint64_t S = c.seq_len;
  // The documents RankStream leaves out (chat data longer than seq_len) never reach the buffer.
  std::vector<uint32_t> kept;
  if (c.drop_longer_than > 0) {
    for (uint32_t n : all) {
      if (n <= c.drop_longer_than) kept.push_back(n);
    }
  }
  const std::vector<uint32_t>& stream = c.drop_longer_than > 0 ? kept : all;
  if (c.pack == PackMode::kPad) return initial.size() + stream.size();
  if (c.pack == PackMode::kConcat) {
    uint64_t tokens = 0;
    for (uint64_t n : initial) tokens += n;
    for (uint32_t n : stream) tokens += n;
    return tokens / S;
  }
  // Best fit: replay the shuffle buffer on the lengths alone (as RankStream::NextDoc draws).
  const uint64_t cap = std::max<uint64_t>(c.shuffle_buffer, 1);
  const uint64_t w = std::max<uint64_t>(c.bestfit_window, 1);
  std::vector<uint64_t> buffer(initial), window;
  uint64_t rows = 0;
  auto pack_window = [&] {
    std::vector<uint64_t> items;
    for (uint64_t n : window) {
      for (uint64_t off = 0; off < n; off += S) {
        items.push_back(PaddedLength(std::min<uint64_t>(S, n - off), c.pad_each_document_to));
      }
    }
    std::vector<uint32_t> bin;
    window.clear();
    return PackStreamChunks(items, c, &bin);
  };
  size_t pos = 0;
  for (;;) {
    while (buffer.size() < cap && pos < stream.size()) buffer.push_back(stream[pos++]);
    if (buffer.empty()) break;
    const size_t j = cap == 1 ? 0 : SplitMix64(&rng) % buffer.size();
    window.push_back(buffer[j]);
    buffer[j] = buffer.back();
    buffer.pop_back();
    if (window.size() == w) rows += pack_window();
  }
  if (!window.empty()) rows += pack_window();  // the epoch's last window, packed alone
  return rows;
}

}  // namespace stoker::stream
