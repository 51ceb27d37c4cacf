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

namespace {

// The shuffle buffer's draws, as RankStream::NextDoc draws: `emit(i)` for each drawn document in
// order, i indexing `initial` followed by `stream` (the buffer holds indices; the draws depend
// only on its size).
template <typename Emit>
void ReplayDraws(const StreamConfig& c, uint64_t rng, const std::vector<uint64_t>& initial,
                 const std::vector<uint32_t>& stream, Emit emit) {
  const uint64_t cap = std::max<uint64_t>(c.shuffle_buffer, 1);
  const uint64_t limit = c.drop_longer_than;
  std::vector<uint64_t> buffer(initial.size());
  for (size_t i = 0; i < initial.size(); ++i) buffer[i] = i;
  size_t pos = 0;
  for (;;) {
    while (buffer.size() < cap && pos < stream.size()) {
      const uint32_t n = stream[pos++];
      if (limit == 0 || n <= limit) buffer.push_back(initial.size() + pos - 1);
    }
    if (buffer.empty()) break;
    const size_t j = cap == 1 ? 0 : SplitMix64(&rng) % buffer.size();
    emit(buffer[j]);
    buffer[j] = buffer.back();
    buffer.pop_back();
  }
}

}  // namespace

std::vector<uint64_t> DrawOrder(const StreamConfig& c, uint64_t rng,
                                const std::vector<uint64_t>& initial,
                                const std::vector<uint32_t>& stream) {
  std::vector<uint64_t> order;
  order.reserve(initial.size() + stream.size());
  ReplayDraws(c, rng, initial, stream, [&](uint64_t i) {
    order.push_back(i < initial.size() ? initial[i] : stream[i - initial.size()]);
  });
  return order;
}

std::vector<uint64_t> DrawIndices(const StreamConfig& c, uint64_t rng,
                                  const std::vector<uint64_t>& initial,
                                  const std::vector<uint32_t>& stream) {
  std::vector<uint64_t> order;
  order.reserve(initial.size() + stream.size());
  ReplayDraws(c, rng, initial, stream, [&](uint64_t i) { order.push_back(i); });
  return order;
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
  // Best fit: replay the shuffle buffer on the lengths alone, then pack its windows.
  const uint64_t w = std::max<uint64_t>(c.bestfit_window, 1);
  const std::vector<uint64_t> order = DrawOrder(c, rng, initial, stream);
  uint64_t rows = 0;
  for (size_t at = 0; at < order.size(); at += w) {  // the last window is packed alone
    std::vector<uint64_t> items;
    for (size_t i = at; i < std::min<size_t>(order.size(), at + w); ++i) {
      for (uint64_t off = 0; off < order[i]; off += S) {
        items.push_back(
            PaddedLength(std::min<uint64_t>(S, order[i] - off), c.pad_each_document_to));
      }
    }
    std::vector<uint32_t> bin;
    rows += PackStreamChunks(items, c, &bin);
  }
  return rows;
}

}  // namespace stoker::stream
