// Context parallelism: each CP rank's share of an assembled batch, and the option checks.
#include "loader/context_parallel.h"

#include <gtest/gtest.h>

#include "loader/loader_test_util.h"
#include "loader/memory_token_source.h"

namespace stoker::loader {
namespace {

// The flattened [B, S / cp] tensor at `offset` of a slot laid out as `layout` (token dtype int64).
std::vector<int64_t> Tensor(const std::vector<uint8_t>& slot, size_t offset, size_t n) {
  const int64_t* p = reinterpret_cast<const int64_t*>(slot.data() + offset);
  return std::vector<int64_t>(p, p + n);
}

struct Share {
  std::vector<int64_t> ids, labels, pos;
  std::vector<int32_t> cu, cu_padded;
};

Share Assemble(AssemblyOptions opt, const MemoryTokenSource& src, const std::vector<Row>& rows) {
  const BatchLayout layout = BatchLayout::For(opt);
  std::vector<uint8_t> slot(layout.total_bytes, 0xAB);
  AssemblyResult result;
  Status s = AssembleBatch(opt, layout, {&src}, rows, slot.data(), &result);
  EXPECT_TRUE(s.ok()) << s.ToString();
  const size_t n = static_cast<size_t>(opt.batch_size) * opt.seq_len / opt.cp_size;
  Share out{Tensor(slot, layout.input_ids, n), Tensor(slot, layout.labels, n),
            Tensor(slot, layout.position_ids, n)};
  const int32_t* cu = reinterpret_cast<const int32_t*>(slot.data() + layout.cu_seqlens);
  const int32_t* cup = reinterpret_cast<const int32_t*>(slot.data() + layout.cu_seqlens_padded);
  out.cu.assign(cu, cu + result.num_cu_seqlens);
  out.cu_padded.assign(cup, cup + result.num_cu_seqlens);
  return out;
}

// doc0: 7 tokens (odd: TransformerEngine #1930), doc1: 3, doc2: 9.
MemoryTokenSource CpDocs() {
  return MemoryTokenSource(
      "docs", {{11, 12, 13, 14, 15, 16, 17}, {21, 22, 23}, {31, 32, 33, 34, 35, 36, 37, 38, 39}});
}

// Rows of `seq_len`, documents padded to 4, shared by 2 CP ranks.
AssemblyOptions CpOptions(int batch_size, int seq_len, bool zigzag) {
  AssemblyOptions opt;
  opt.batch_size = batch_size;
  opt.seq_len = seq_len;
  opt.pad_each_document_to = 4;
  opt.cp_size = 2;
  opt.cp_zigzag = zigzag;
  return opt;
}

TEST(ContextParallelTest, ZigzagKeepsChunksRAnd2cpMinus1MinusR) {
  MemoryTokenSource src = CpDocs();
  AssemblyOptions opt = CpOptions(1, 16, /*zigzag=*/true);
  const std::vector<Row> rows = {Row{{{0, 0, 0, 7}, {0, 1, 0, 3}}}};
  // Whole row: [11..17, pad | 21 22 23 pad | 4 padding]; segments of 8, 4, 4 -> chunks of 2, 1, 1.
  opt.cp_rank = 0;
  Share r0 = Assemble(opt, src, rows);
  EXPECT_EQ(r0.ids, (std::vector<int64_t>{11, 12, 17, 0, 21, 0, 0, 0}));
  EXPECT_EQ(r0.pos, (std::vector<int64_t>{0, 1, 6, 7, 0, 3, 0, 0}));
  EXPECT_EQ(r0.labels, (std::vector<int64_t>{12, 13, -100, -100, 22, -100, -100, -100}));
  opt.cp_rank = 1;
  Share r1 = Assemble(opt, src, rows);
  EXPECT_EQ(r1.ids, (std::vector<int64_t>{13, 14, 15, 16, 22, 23, 0, 0}));
  EXPECT_EQ(r1.pos, (std::vector<int64_t>{2, 3, 4, 5, 1, 2, 0, 0}));
  EXPECT_EQ(r1.labels, (std::vector<int64_t>{14, 15, 16, 17, 23, -100, -100, -100}));
  // Every token of the odd document is in exactly one share (its last, 17, in rank 0's chunk 3).
  for (int64_t t : {11, 12, 13, 14, 15, 16, 17}) {
    EXPECT_EQ(
        std::count(r0.ids.begin(), r0.ids.end(), t) + std::count(r1.ids.begin(), r1.ids.end(), t),
        1)
        << t;
  }
  // The metadata is the whole row's, on every rank.
  EXPECT_EQ(r0.cu, (std::vector<int32_t>{0, 7, 10, 14}));
  EXPECT_EQ(r0.cu_padded, (std::vector<int32_t>{0, 8, 12, 16}));
  EXPECT_EQ(r1.cu, r0.cu);
  EXPECT_EQ(r1.cu_padded, r0.cu_padded);
}

TEST(ContextParallelTest, ContiguousKeepsChunkR) {
  MemoryTokenSource src = CpDocs();
  AssemblyOptions opt = CpOptions(2, 12, /*zigzag=*/false);
  const std::vector<Row> rows = {Row{{{0, 2, 0, 9}}}, Row{{{0, 1, 0, 3}}}};
  opt.cp_rank = 1;
  Share r1 = Assemble(opt, src, rows);
  // Row 0: doc2 padded to 12 -> second half; row 1: doc1 padded to 4 (second half) and a padding
  // run of 8 (second half).
  EXPECT_EQ(r1.ids, (std::vector<int64_t>{37, 38, 39, 0, 0, 0, 23, 0, 0, 0, 0, 0}));
  EXPECT_EQ(r1.pos, (std::vector<int64_t>{6, 7, 8, 9, 10, 11, 2, 3, 0, 0, 0, 0}));
}

TEST(ContextParallelTest, OptionsAreCheckedSayingWhatToSet) {
  LoaderOptions o;
  o.pack = PackMode::kBestFit;
  o.cp_size = 2;
  o.cp_rank = 1;
  Status s = CheckContextParallel(o);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("set pad_each_document_to to a multiple of 2 * cp_size = 4 (it is 0)"),
            std::string::npos)
      << s.message();
  o.pad_each_document_to = 8;
  EXPECT_TRUE(CheckContextParallel(o).ok());
  o.cp_layout = "contiguous";
  o.pad_each_document_to = 2;
  EXPECT_TRUE(CheckContextParallel(o).ok());
  o.cp_layout = "ring";
  EXPECT_NE(CheckContextParallel(o).message().find("'zigzag' or 'contiguous'"), std::string::npos);
  o.cp_layout = "zigzag";
  o.pad_each_document_to = 4;
  o.cp_rank = 2;
  EXPECT_NE(CheckContextParallel(o).message().find("cp_rank below it"), std::string::npos);
  o.cp_rank = 0;
  o.attention_mask = true;
  EXPECT_NE(CheckContextParallel(o).message().find("attention_mask"), std::string::npos);
  o.attention_mask = false;
  o.flex_block_size = 64;  // the tables are the whole rows' mask: not with a CP share
  EXPECT_NE(CheckContextParallel(o).message().find("flex_block_mask with context_parallel"),
            std::string::npos);
  o.cp_size = 1;
  EXPECT_TRUE(CheckContextParallel(o).ok());
  o.flex_mask_kind = "sliding_window";  // needs its window
  EXPECT_NE(CheckContextParallel(o).message().find("needs a window"), std::string::npos);
}

}  // namespace
}  // namespace stoker::loader
