// The provenance of a stream's step: every piece names the input file and the byte offset of its
// record's line, and the piece's tokens are that line's text's tokens at the named range.
#include "stream/stream_provenance.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "stream/stream_test_util.h"

namespace stoker::stream {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(StreamProvenance, EveryPieceNamesItsLineAndTokenRange) {
  testing::TempDir dir;
  const std::vector<std::string> paths = testing::WriteCorpus(dir, {60, 25});
  StreamOptions so;
  so.inputs = paths;
  so.shuffle_buffer = 16;
  LoaderOptions lo;
  lo.batch_size = 3;
  lo.seq_len = 48;
  lo.world_size = 2;
  lo.rank = 1;
  lo.pack = PackMode::kBestFit;
  auto planner = StreamPlanner::Create(so, lo);
  ASSERT_TRUE(planner.ok()) << planner.status().ToString();
  const uint64_t global = lo.batch_size * lo.world_size;
  uint64_t pieces = 0;
  for (uint64_t step = 0; step < std::min<uint64_t>(6, (*planner)->steps_per_epoch(0)); ++step) {
    const PlanPosition pos{0, step * global};
    auto rows = (*planner)->RowsAt(pos);
    auto p = ExplainStreamStep(**planner, pos, 1, global);
    ASSERT_TRUE(rows.ok() && p.ok()) << p.status().ToString();
    EXPECT_EQ(p->step, step);
    EXPECT_EQ(p->rank, 1u);
    ASSERT_EQ(p->rows.size(), rows->size());
    for (size_t r = 0; r < rows->size(); ++r) {
      uint64_t at = 0;
      ASSERT_EQ(p->rows[r].pieces.size(), (*rows)[r].size());
      for (size_t k = 0; k < (*rows)[r].size(); ++k) {
        const PackedPiece& want = (*rows)[r][k];
        const loader::PieceProvenance& got = p->rows[r].pieces[k];
        EXPECT_EQ(got.row_offset, at);
        at += got.length;
        EXPECT_EQ(got.offset, want.offset);
        EXPECT_EQ(got.length, want.length);
        EXPECT_EQ(got.shard, want.ref.shard);
        EXPECT_EQ(got.record, want.ref.record);
        ASSERT_TRUE(got.byte_offset.has_value());
        // The line at the byte offset, tokenized by the bytes tokenizer (+ EOS), is the document.
        const std::string file = ReadAll(got.source);
        const size_t end = file.find('\n', *got.byte_offset);
        ASSERT_NE(end, std::string::npos);
        const std::string text =
            nlohmann::json::parse(file.substr(*got.byte_offset, end - *got.byte_offset))["text"];
        std::vector<int32_t> doc(text.begin(), text.end());
        for (int32_t& id : doc) id &= 0xff;
        doc.push_back(256);
        ASSERT_EQ(*want.tokens, doc) << got.source << " at byte " << *got.byte_offset;
        ++pieces;
      }
    }
  }
  EXPECT_GT(pieces, 10u);
}

}  // namespace
}  // namespace stoker::stream
