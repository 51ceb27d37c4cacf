// PiecePrefetcher: many reads in flight at once through a reader whose every read takes a
// request's latency, pieces taken in plan order with the reader's tokens, a document cut across
// rows read with one request, and the cases where a worker reads a piece itself (not scheduled,
// still queued, failed, cleared).
#include "loader/piece_prefetcher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "storage/cancel.h"

namespace stoker::loader {
namespace {

// Document d holds tokens 1000*d, 1000*d + 1, ...; every read sleeps `latency` and counts the
// reads in flight. Reads of document `fail` fail. With `back_to_back`, the documents (100 tokens
// each) are stored one after another, and ReadSpan reads across them.
class SlowReader final : public DocumentReader {
 public:
  explicit SlowReader(std::chrono::milliseconds latency, uint64_t fail = UINT64_MAX,
                      bool back_to_back = false)
      : latency_(latency), fail_(fail), back_to_back_(back_to_back) {}
  const std::string& path() const override { return name_; }
  std::optional<uint64_t> FindDocumentLength(uint64_t) const override { return 100; }
  std::optional<uint64_t> TokensBetween(uint64_t doc, uint64_t end, uint64_t next_doc,
                                        uint64_t next_offset) const override {
    if (!back_to_back_) return std::nullopt;
    return 100 * next_doc + next_offset - (100 * doc + end);
  }
  Status ReadSpan(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const override {
    if (!back_to_back_ || offset + count <= 100) return Read(doc, offset, count, out);
    STOKER_RETURN_IF_ERROR(Read(doc, offset, 0, out));  // one request
    for (uint64_t k = 0, at = 100 * doc + offset; k < count; ++k, ++at) {
      out[k] = static_cast<int32_t>(1000 * (at / 100) + at % 100);
    }
    return Status::OK();
  }
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const override {
    const int now = in_flight_.fetch_add(1) + 1;
    int seen = max_in_flight_.load();
    while (now > seen && !max_in_flight_.compare_exchange_weak(seen, now)) {
    }
    // Sleeps in slices, stopping early when the thread's requests are cancelled.
    for (auto slept = std::chrono::milliseconds(0); slept < latency_;
         slept += std::chrono::milliseconds(1)) {
      if (storage::CancelRequested()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    in_flight_.fetch_sub(1);
    reads_.fetch_add(1);
    if (doc == fail_) return Unavailable("injected failure of document " + std::to_string(doc));
    for (uint64_t k = 0; k < count; ++k) out[k] = static_cast<int32_t>(1000 * doc + offset + k);
    return Status::OK();
  }
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const override {
    std::vector<int32_t> t(count);
    STOKER_RETURN_IF_ERROR(Read(doc, offset, count, t.data()));
    std::copy(t.begin(), t.end(), out);
    return Status::OK();
  }
  int max_in_flight() const { return max_in_flight_.load(); }
  uint64_t reads() const { return reads_.load(); }

 private:
  std::string name_ = "slow";
  std::chrono::milliseconds latency_;
  uint64_t fail_;
  bool back_to_back_;
  mutable std::atomic<int> in_flight_{0};
  mutable std::atomic<int> max_in_flight_{0};
  mutable std::atomic<uint64_t> reads_{0};
};

// Until the fetch threads have started `n` reads (a piece being read is waited for by Take; one
// still queued would be left to the caller).
void WaitForReads(const SlowReader& reader, uint64_t n) {
  while (reader.reads() < n) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

std::vector<PieceFetch> Pieces(uint64_t n) {
  std::vector<PieceFetch> out;
  for (uint64_t d = 0; d < n; ++d) out.push_back({d, d % 7, 10 + d % 5, d / 4});
  return out;
}

void ExpectTokens(const std::vector<int32_t>& got, uint64_t doc, uint64_t offset) {
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k], static_cast<int32_t>(1000 * doc + offset + k)) << "doc " << doc;
  }
}

TEST(PiecePrefetcherTest, FetchesManyAtOnceAndServesEveryPieceInPlanOrder) {
  auto reader = std::make_shared<SlowReader>(std::chrono::milliseconds(20));
  PiecePrefetcher prefetcher(reader, PiecePrefetchOptions{16, 1 << 20, 256});
  const std::vector<PieceFetch> pieces = Pieces(160);
  prefetcher.Add(pieces);
  for (const PieceFetch& p : pieces) {
    std::vector<int32_t> out(p.count);
    // A piece still queued when it is asked for is taken off the queue: the caller reads it.
    if (!prefetcher.Take(p.document, p.offset, p.count, out.data())) {
      ASSERT_TRUE(reader->Read(p.document, p.offset, p.count, out.data()).ok());
    }
    ExpectTokens(out, p.document, p.offset);
  }
  // 160 reads of 20 ms, 16 at a time: many in flight, every piece read once.
  EXPECT_GE(reader->max_in_flight(), 8);
  EXPECT_LE(reader->max_in_flight(), 17);  // the fetch threads, and this thread after a miss
  EXPECT_EQ(reader->reads(), 160u);
  EXPECT_GE(prefetcher.taken(), 80u);
  EXPECT_EQ(prefetcher.taken() + prefetcher.missed(), 160u);
}

TEST(PiecePrefetcherTest, ConvertsToInt64AndMissesPiecesItWasNotGiven) {
  auto reader = std::make_shared<SlowReader>(std::chrono::milliseconds(0));
  PiecePrefetcher prefetcher(reader, PiecePrefetchOptions{2, 1 << 20, 256});
  prefetcher.Add({{5, 3, 4, 0}});
  WaitForReads(*reader, 1);
  std::vector<int64_t> out(4);
  ASSERT_TRUE(prefetcher.Take(5, 3, 4, out.data()));
  EXPECT_EQ(out, (std::vector<int64_t>{5003, 5004, 5005, 5006}));
  // Taken once: the same piece again, and pieces with another offset or count, are not there.
  EXPECT_FALSE(prefetcher.Take(5, 3, 4, out.data()));
  prefetcher.Add({{6, 0, 4, 1}});
  WaitForReads(*reader, 2);
  EXPECT_FALSE(prefetcher.Take(6, 1, 4, out.data()));
  EXPECT_FALSE(prefetcher.Take(6, 0, 3, out.data()));
  EXPECT_TRUE(prefetcher.Take(6, 0, 4, out.data()));
  EXPECT_EQ(prefetcher.missed(), 3u);
}

TEST(PiecePrefetcherTest, AFailedFetchIsLeftToTheCaller) {
  auto reader = std::make_shared<SlowReader>(std::chrono::milliseconds(1), /*fail=*/3);
  PiecePrefetcher prefetcher(reader, PiecePrefetchOptions{4, 1 << 20, 256});
  prefetcher.Add(Pieces(8));
  std::vector<int32_t> out(64);
  WaitForReads(*reader, 8);
  EXPECT_FALSE(prefetcher.Take(3, 3, 13, out.data()));
  EXPECT_TRUE(prefetcher.Take(4, 4, 14, out.data()));
  ExpectTokens(std::vector<int32_t>(out.begin(), out.begin() + 14), 4, 4);
}

TEST(PiecePrefetcherTest, ClearForgetsAndHeldBytesAreBounded) {
  auto reader = std::make_shared<SlowReader>(std::chrono::milliseconds(0));
  // Room for two pieces of 10 tokens: the fetch threads stop there until one is taken.
  PiecePrefetcher prefetcher(reader, PiecePrefetchOptions{4, 80, 256});
  std::vector<PieceFetch> pieces;
  for (uint64_t d = 0; d < 6; ++d) pieces.push_back({d, 0, 10, d});
  prefetcher.Add(pieces);
  WaitForReads(*reader, 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // time to read more, if it would
  EXPECT_EQ(reader->reads(), 2u);
  std::vector<int32_t> out(10);
  ASSERT_TRUE(prefetcher.Take(0, 0, 10, out.data()));
  WaitForReads(*reader, 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(reader->reads(), 3u);
  prefetcher.Clear();
  EXPECT_FALSE(prefetcher.Take(1, 0, 10, out.data()));
  EXPECT_FALSE(prefetcher.Take(5, 0, 10, out.data()));
}

TEST(PiecePrefetcherTest, PiecesFarBehindTheTakenOnesAreDropped) {
  auto reader = std::make_shared<SlowReader>(std::chrono::milliseconds(0));
  PiecePrefetcher prefetcher(reader, PiecePrefetchOptions{2, 1 << 20, /*stale_steps=*/4});
  prefetcher.Add({{1, 0, 10, 0}, {2, 0, 10, 10}});
  WaitForReads(*reader, 2);
  std::vector<int32_t> out(10);
  ASSERT_TRUE(prefetcher.Take(2, 0, 10, out.data()));  // step 10 taken: step 0 is stale
  prefetcher.Add({{3, 0, 10, 11}});
  EXPECT_FALSE(prefetcher.Take(1, 0, 10, out.data()));
}

TEST(PiecePrefetcherTest, ADocumentCutAcrossRowsIsReadWithOneRequest) {
  auto reader = std::make_shared<SlowReader>(std::chrono::milliseconds(0));
  PiecePrefetchOptions options{4, 1 << 20, 256};
  options.max_gap_bytes = 4 * 50;  // the piece of 3 at 200 is 100 tokens away: read on its own
  PiecePrefetcher prefetcher(reader, options);
  // Document 3 over three rows (each cut piece also reads the token after it), document 9 over
  // two (pieces end to end), document 5 in one, and a piece of 3 that does not follow the others.
  const std::vector<PieceFetch> pieces = {{3, 0, 41, 0}, {5, 0, 10, 0},  {3, 40, 41, 0},
                                          {9, 0, 30, 1}, {3, 80, 20, 1}, {9, 30, 30, 2},
                                          {3, 200, 5, 2}};
  prefetcher.Add(pieces);
  WaitForReads(*reader, 4);
  for (const PieceFetch& p : pieces) {
    std::vector<int32_t> out(p.count);
    ASSERT_TRUE(prefetcher.Take(p.document, p.offset, p.count, out.data()))
        << p.document << "@" << p.offset;
    ExpectTokens(out, p.document, p.offset);
  }
  EXPECT_EQ(reader->reads(), 4u);  // [0, 100) of 3, [0, 60) of 9, 5, and 3 at 200
  EXPECT_EQ(prefetcher.fetches(), 4u);
  EXPECT_EQ(prefetcher.taken(), pieces.size());
}

// Takes every piece (each must have been fetched) and checks its tokens.
void TakeAll(PiecePrefetcher& prefetcher, const std::vector<PieceFetch>& pieces) {
  for (const PieceFetch& p : pieces) {
    std::vector<int32_t> out(p.count);
    ASSERT_TRUE(prefetcher.Take(p.document, p.offset, p.count, out.data()))
        << p.document << "@" << p.offset;
    ExpectTokens(out, p.document, p.offset);
  }
}

TEST(PiecePrefetcherTest, NeighbouringPiecesAreReadWithOneRequest) {
  auto reader = std::make_shared<SlowReader>(std::chrono::milliseconds(0), UINT64_MAX,
                                             /*back_to_back=*/true);
  PiecePrefetchOptions options{1, 1 << 20, 256};
  options.max_gap_bytes = 4 * 150;
  PiecePrefetcher prefetcher(reader, options);
  // In plan order; in storage order: 2@60 | 3@0 | 3@50 (gap 40) | 5@10 (gap 150: doc 4 between)
  // | 9@0 (gap 360: too far, its own request). One fetch thread: the first run takes the pieces
  // stored before and after the first piece queued.
  const std::vector<PieceFetch> pieces = {
      {3, 0, 10, 0}, {9, 0, 20, 0}, {5, 10, 30, 0}, {2, 60, 40, 1}, {3, 50, 10, 1}};
  prefetcher.Add(pieces);
  WaitForReads(*reader, 2);
  TakeAll(prefetcher, pieces);
  EXPECT_EQ(reader->reads(), 2u);
  EXPECT_EQ(prefetcher.fetches(), 2u);
}

TEST(PiecePrefetcherTest, DocumentsAreNotJoinedWhereTheReaderCannotReadAcross) {
  auto reader = std::make_shared<SlowReader>(std::chrono::milliseconds(0));
  PiecePrefetcher prefetcher(reader, PiecePrefetchOptions{1, 1 << 20, 256});
  const std::vector<PieceFetch> pieces = {{3, 0, 100, 0}, {4, 0, 10, 0}, {3, 0, 5, 1}};
  prefetcher.Add(pieces);
  WaitForReads(*reader, 3);
  TakeAll(prefetcher, pieces);
  EXPECT_EQ(reader->reads(), 3u);  // two documents, and a piece inside another one's span
}

TEST(PiecePrefetcherTest, ARunStopsAtItsByteBound) {
  auto reader = std::make_shared<SlowReader>(std::chrono::milliseconds(0));
  PiecePrefetchOptions options{2, 1 << 20, 256};
  options.max_run_bytes = 4 * 64;  // room for one 41-token piece, not two
  PiecePrefetcher prefetcher(reader, options);
  const std::vector<PieceFetch> pieces = {{3, 0, 41, 0}, {3, 40, 41, 0}, {3, 80, 20, 1}};
  prefetcher.Add(pieces);
  WaitForReads(*reader, 2);
  for (const PieceFetch& p : pieces) {
    std::vector<int32_t> out(p.count);
    ASSERT_TRUE(prefetcher.Take(p.document, p.offset, p.count, out.data()));
    ExpectTokens(out, p.document, p.offset);
  }
  EXPECT_EQ(reader->reads(), 2u);  // [0, 41), then [40, 100)
}

TEST(PiecePrefetcherTest, ShutdownCancelsReadsInFlight) {
  auto reader = std::make_shared<SlowReader>(std::chrono::hours(1));
  auto prefetcher =
      std::make_unique<PiecePrefetcher>(reader, PiecePrefetchOptions{4, 1 << 20, 256});
  prefetcher->Add(Pieces(8));
  while (reader->max_in_flight() < 4) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  prefetcher.reset();  // joins: its reads of an hour see the cancellation (else ctest times out)
  EXPECT_EQ(reader->reads(), 4u);
}

}  // namespace
}  // namespace stoker::loader
