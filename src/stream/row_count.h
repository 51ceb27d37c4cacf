// What a rank's stream packs, from document lengths alone: best fit's rows over one window
// (shared by RankStream, which packs the tokens, and the step counts) and the rows a whole stream
// yields (the shuffle buffer replayed as RankStream draws it, then the packer). Plain functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "stream/rank_stream.h"

namespace stoker::stream {

struct WindowChunk {
  size_t doc = 0;  // index into the window
  uint64_t offset = 0, length = 0;
};

// Each document's tokens [begin, end) (given as spans[i] = {begin, end}) cut into c.seq_len
// chunks, packed best-fit decreasing, each chunk taking its room padded to
// c.pad_each_document_to, at most c.max_documents_per_row chunks a row (when set): the chunks of
// each row.
std::vector<std::vector<WindowChunk>> BestFitWindow(
    const std::vector<std::pair<uint64_t, uint64_t>>& spans, const StreamConfig& c);

// The lengths of the documents a stream draws, in draw order: the shuffle buffer starts with
// `initial` and is fed `stream` in order, drawn with `rng` as RankStream::NextDoc draws; documents
// longer than c.drop_longer_than (when set) are left out before the buffer, as RankStream::ReadOne
// leaves them out.
std::vector<uint64_t> DrawOrder(const StreamConfig& c, uint64_t rng,
                                const std::vector<uint64_t>& initial,
                                const std::vector<uint32_t>& stream);
// The same draws as indices: i < initial.size() is initial[i], else stream[i - initial.size()].
std::vector<uint64_t> DrawIndices(const StreamConfig& c, uint64_t rng,
                                  const std::vector<uint64_t>& initial,
                                  const std::vector<uint32_t>& stream);

// The full rows a stream yields: the shuffle buffer starts with `initial` (lengths of the
// documents already in it, in order) and is fed `stream` in order, drawn with `rng` as
// RankStream::NextDoc draws; concat, pad or best fit (the epoch's last, partial window is packed
// alone, as RankStream packs it). Documents longer than c.drop_longer_than (when set) are left out,
// as RankStream leaves them out.
uint64_t CountRows(const StreamConfig& c, uint64_t rng, const std::vector<uint64_t>& initial,
                   const std::vector<uint32_t>& stream);

}  // namespace stoker::stream
