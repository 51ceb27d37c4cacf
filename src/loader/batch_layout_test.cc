#include "loader/batch_layout.h"

#include <gtest/gtest.h>

#include "loader/loader_test_util.h"
#include "loader/memory_token_source.h"

namespace stoker::loader {
namespace {

constexpr int64_t X = -100;  // ignore_index

struct Built {
  std::vector<int64_t> ids, labels, pos, seg, cu, mask, loss_mask, seq_idx, cu_padded;
  AssemblyResult result;
  Status status;
};

Built Build(const AssemblyOptions& opt, const std::vector<const DocumentReader*>& sources,
            const std::vector<Row>& rows) {
  BatchLayout layout = BatchLayout::For(opt);
  std::vector<uint8_t> slot(layout.total_bytes, 0xAB);
  Built b;
  b.status = AssembleBatch(opt, layout, sources, rows, slot.data(), &b.result);
  if (!b.status.ok()) return b;
  auto view = [&](size_t off, TokenDType dt, int64_t n) {
    TensorView v;
    v.data = slot.data() + off;
    v.dtype = dt;
    v.ndim = 1;
    v.shape[0] = n;
    return testing::ToVector(v);
  };
  const int64_t cells = int64_t(opt.batch_size) * opt.seq_len;
  b.ids = view(layout.input_ids, opt.dtype, cells);
  b.labels = view(layout.labels, opt.dtype, cells);
  if (layout.has_position_ids) b.pos = view(layout.position_ids, opt.dtype, cells);
  if (layout.has_segment_ids) b.seg = view(layout.segment_ids, opt.dtype, cells);
  b.cu = view(layout.cu_seqlens, TokenDType::kInt32, b.result.num_cu_seqlens);
  if (layout.has_mask) {
    b.mask = view(layout.attention_mask, TokenDType::kUint8, cells * opt.seq_len);
  }
  if (layout.has_loss_mask) b.loss_mask = view(layout.loss_mask, opt.dtype, cells);
  if (layout.has_seq_idx) b.seq_idx = view(layout.seq_idx, TokenDType::kInt32, cells);
  if (layout.has_cu_seqlens_padded) {
    b.cu_padded = view(layout.cu_seqlens_padded, TokenDType::kInt32, b.result.num_cu_seqlens);
  }
  return b;
}

Built Build(const AssemblyOptions& opt, const TokenSource& src, const std::vector<Row>& rows) {
  return Build(opt, std::vector<const DocumentReader*>{&src}, rows);
}

// doc0 = 11..15, doc1 = 21..23, doc2 = 31..36
MemoryTokenSource Docs() {
  return MemoryTokenSource("docs", {{11, 12, 13, 14, 15}, {21, 22, 23}, {31, 32, 33, 34, 35, 36}});
}

TEST(LoaderAssemblyTest, DocumentBoundariesAndPadding) {
  MemoryTokenSource src = Docs();
  AssemblyOptions opt;
  opt.batch_size = 1;
  opt.seq_len = 10;
  Built b = Build(opt, src, {Row{{{0, 0, 0, 5}, {0, 1, 0, 3}}}});
  ASSERT_TRUE(b.status.ok()) << b.status.ToString();
  EXPECT_EQ(b.ids, (std::vector<int64_t>{11, 12, 13, 14, 15, 21, 22, 23, 0, 0}));
  EXPECT_EQ(b.labels, (std::vector<int64_t>{12, 13, 14, 15, X, 22, 23, X, X, X}));
  EXPECT_EQ(b.pos, (std::vector<int64_t>{0, 1, 2, 3, 4, 0, 1, 2, 0, 0}));
  EXPECT_EQ(b.seg, (std::vector<int64_t>{1, 1, 1, 1, 1, 2, 2, 2, 0, 0}));
  EXPECT_EQ(b.cu, (std::vector<int64_t>{0, 5, 8, 10}));
  EXPECT_EQ(b.result.max_seqlen, 5);
  EXPECT_EQ(b.result.real_tokens, 8u);
}

TEST(LoaderAssemblyTest, SourceCountsSplitTheBatchByDataset) {
  MemoryTokenSource a = Docs();
  MemoryTokenSource b = Docs();
  for (bool cross : {false, true}) {
    AssemblyOptions opt;
    opt.batch_size = 2;
    opt.seq_len = 8;
    opt.cross_document_targets = cross;
    // Row 0: a's doc0 whole, then b's doc1 whole; row 1: a's doc2 from token 1, cut after 4 (not a
    // document begun), then b's doc2 from its start, cut after 4.
    Built built = Build(opt, std::vector<const DocumentReader*>{&a, &b},
                        {Row{{{0, 0, 0, 5}, {1, 1, 0, 3}}}, Row{{{0, 2, 1, 4}, {1, 2, 0, 4}}}});
    ASSERT_TRUE(built.status.ok()) << built.status.ToString();
    const std::vector<SourceCount>& s = built.result.sources;
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].tokens, 9u);
    EXPECT_EQ(s[1].tokens, 7u);
    EXPECT_EQ(s[0].documents, 1u);  // doc0; doc2 from token 1 is a continuation
    EXPECT_EQ(s[1].documents, 2u);
    EXPECT_EQ(s[0].pieces, 2u);
    EXPECT_EQ(s[1].pieces, 2u);
    // Trained positions, counted where the label sits: a's doc0 has 4 (+1 with cross-document
    // targets: its last label is b's first token); a's doc2 piece ends before its document does
    // (4); b's doc1 has 2, b's doc2 piece 4 (cut: its last label is the next token).
    EXPECT_EQ(s[0].trained_tokens, cross ? 9u : 8u);
    EXPECT_EQ(s[1].trained_tokens, 6u);
    EXPECT_EQ(s[0].trained_tokens + s[1].trained_tokens, built.result.trained_tokens);
    EXPECT_EQ(s[0].tokens + s[1].tokens, built.result.real_tokens);
  }
}

TEST(LoaderAssemblyTest, SeqIdxNumbersTheCuSeqlensSegments) {
  MemoryTokenSource src = Docs();
  AssemblyOptions opt;
  opt.batch_size = 2;
  opt.seq_len = 6;
  // Row 0: doc0 then a padding run; row 1: a split document then a boundary (no padding).
  const std::vector<Row> rows = {Row{{{0, 0, 0, 5}}}, Row{{{0, 2, 0, 4}, {0, 1, 0, 2}}}};
  EXPECT_TRUE(Build(opt, src, rows).seq_idx.empty());  // off by default
  opt.seq_idx = true;
  for (TokenDType dtype : {TokenDType::kInt64, TokenDType::kInt32}) {
    opt.dtype = dtype;
    Built b = Build(opt, src, rows);
    ASSERT_TRUE(b.status.ok()) << b.status.ToString();
    EXPECT_EQ(b.cu, (std::vector<int64_t>{0, 5, 6, 10, 12}));
    EXPECT_EQ(b.seq_idx, (std::vector<int64_t>{0, 0, 0, 0, 0, 1, 2, 2, 2, 2, 3, 3}));
  }
}

// TransformerEngine #1930: with cp = 2 a document of odd length must be padded to a multiple of
// 2 * cp = 4, else its last token is lost. Every token stays; the padding is untrained.
TEST(LoaderAssemblyTest, EachDocumentIsPaddedToAMultipleKeepingEveryToken) {
  MemoryTokenSource src("docs", {{11, 12, 13, 14, 15, 16, 17}, {21, 22, 23}});
  AssemblyOptions opt;
  opt.batch_size = 1;
  opt.seq_len = 16;
  opt.seq_idx = true;
  const std::vector<Row> rows = {Row{{{0, 0, 0, 7}, {0, 1, 0, 3}}}};
  Built plain = Build(opt, src, rows);
  EXPECT_TRUE(plain.cu_padded.empty());  // only with the option
  opt.pad_each_document_to = 4;
  Built b = Build(opt, src, rows);
  ASSERT_TRUE(b.status.ok()) << b.status.ToString();
  EXPECT_EQ(b.ids,
            (std::vector<int64_t>{11, 12, 13, 14, 15, 16, 17, 0, 21, 22, 23, 0, 0, 0, 0, 0}));
  EXPECT_EQ(b.labels,
            (std::vector<int64_t>{12, 13, 14, 15, 16, 17, X, X, 22, 23, X, X, X, X, X, X}));
  EXPECT_EQ(b.pos, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 0, 0, 0, 0}));
  EXPECT_EQ(b.seg, (std::vector<int64_t>{1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0}));
  // cu_seqlens: real lengths (7, 3, then the tail run); cu_seqlens_padded: offsets in the row.
  EXPECT_EQ(b.cu, (std::vector<int64_t>{0, 7, 10, 14}));
  EXPECT_EQ(b.cu_padded, (std::vector<int64_t>{0, 8, 12, 16}));
  EXPECT_EQ(b.seq_idx, (std::vector<int64_t>{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}));
  EXPECT_EQ(b.result.max_seqlen, 8);
  EXPECT_EQ(b.result.real_tokens, 10u);
  EXPECT_EQ(b.result.trained_tokens, plain.result.trained_tokens);
  // A row whose padded pieces overflow is the plan's error, not a silent truncation.
  opt.seq_len = 11;  // 7 + 3 tokens fit, 8 + 4 do not
  EXPECT_EQ(Build(opt, src, rows).status.code(), StatusCode::kInternal);
}

TEST(LoaderAssemblyTest, MaxDocumentsPerRowGivesCuSeqlensAFixedCapacity) {
  MemoryTokenSource src = Docs();
  AssemblyOptions opt;
  opt.batch_size = 2;
  opt.seq_len = 10;
  opt.max_documents_per_row = 3;
  // Row 0: two documents and padding; row 1: one document and padding.
  const std::vector<Row> rows = {Row{{{0, 0, 0, 5}, {0, 1, 0, 3}}}, Row{{{0, 2, 0, 6}}}};
  Built b = Build(opt, src, rows);
  ASSERT_TRUE(b.status.ok()) << b.status.ToString();
  EXPECT_EQ(opt.CuSeqlensCapacity(), 9);  // 2 rows * (3 documents + a padding run) + 1
  EXPECT_EQ(b.cu, (std::vector<int64_t>{0, 5, 8, 10, 16, 20, 20, 20, 20}));
  opt.pad_each_document_to = 2;  // row 0 is then full (6 + 4): no padding run
  b = Build(opt, src, rows);
  ASSERT_TRUE(b.status.ok()) << b.status.ToString();
  EXPECT_EQ(b.cu, (std::vector<int64_t>{0, 5, 8, 14, 18, 18, 18, 18, 18}));
  EXPECT_EQ(b.cu_padded, (std::vector<int64_t>{0, 6, 10, 16, 20, 20, 20, 20, 20}));
  // A row with more documents than promised fails the batch: nothing is cut silently.
  opt.max_documents_per_row = 1;
  Built over = Build(opt, src, rows);
  EXPECT_EQ(over.status.code(), StatusCode::kInternal);
  EXPECT_NE(over.status.message().find("more than max_documents_per_row=1"), std::string::npos)
      << over.status.message();
}

TEST(LoaderAssemblyTest, PaddedChatDocumentsAreUntrainedAtThePadding) {
  testing::MaskedSource src({{1, 2, 3, 4, 5}}, {{0, 0, 1, 1, 1}});
  AssemblyOptions opt;
  opt.batch_size = 1;
  opt.seq_len = 8;
  opt.loss_mask = true;
  opt.pad_each_document_to = 8;
  Built b = Build(opt, src, {Row{{{0, 0, 0, 5}}}});
  ASSERT_TRUE(b.status.ok()) << b.status.ToString();
  EXPECT_EQ(b.labels, (std::vector<int64_t>{X, 3, 4, 5, X, X, X, X}));
  EXPECT_EQ(b.loss_mask, (std::vector<int64_t>{0, 1, 1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(b.cu_padded, (std::vector<int64_t>{0, 8}));
  EXPECT_EQ(b.cu, (std::vector<int64_t>{0, 5}));
}

TEST(LoaderAssemblyTest, PositionAndSegmentIdsCanBeLeftOut) {
  MemoryTokenSource src = Docs();
  AssemblyOptions full;
  full.batch_size = 2;
  full.seq_len = 6;
  // Padding, a split document and a document boundary.
  const std::vector<Row> rows = {Row{{{0, 0, 0, 5}}}, Row{{{0, 2, 0, 4}, {0, 1, 0, 2}}}};
  for (TokenDType dtype : {TokenDType::kInt64, TokenDType::kInt32}) {
    full.dtype = dtype;
    AssemblyOptions lean = full;
    lean.position_ids = lean.segment_ids = false;
    Built a = Build(full, src, rows);
    Built b = Build(lean, src, rows);
    ASSERT_TRUE(a.status.ok() && b.status.ok());
    EXPECT_EQ(b.ids, a.ids);
    EXPECT_EQ(b.labels, a.labels);
    EXPECT_EQ(b.cu, a.cu);
    EXPECT_EQ(b.result.max_seqlen, a.result.max_seqlen);
    EXPECT_EQ(b.result.real_tokens, a.result.real_tokens);
    EXPECT_TRUE(b.pos.empty() && b.seg.empty());
    EXPECT_EQ(a.pos, (std::vector<int64_t>{0, 1, 2, 3, 4, 0, 0, 1, 2, 3, 0, 1}));
    const BatchLayout la = BatchLayout::For(full), lb = BatchLayout::For(lean);
    EXPECT_FALSE(lb.has_position_ids || lb.has_segment_ids);
    EXPECT_GE(la.total_bytes - lb.total_bytes, 2 * 12 * la.elem_bytes) << "the slot shrinks";
  }
}

TEST(LoaderAssemblyTest, SplitDocumentTakesNextTokenAsLastLabel) {
  MemoryTokenSource src = Docs();
  AssemblyOptions opt;
  opt.batch_size = 2;
  opt.seq_len = 6;
  opt.dtype = TokenDType::kInt32;
  // Row 0: doc1 whole, then doc2 [0, 3) (split); row 1: doc2 [3, 6) then doc0 [0, 3) (split).
  Built b = Build(opt, src, {Row{{{0, 1, 0, 3}, {0, 2, 0, 3}}}, Row{{{0, 2, 3, 3}, {0, 0, 0, 3}}}});
  ASSERT_TRUE(b.status.ok()) << b.status.ToString();
  EXPECT_EQ(b.ids, (std::vector<int64_t>{21, 22, 23, 31, 32, 33, 34, 35, 36, 11, 12, 13}));
  EXPECT_EQ(b.labels, (std::vector<int64_t>{22, 23, X, 32, 33, 34, 35, 36, X, 12, 13, 14}));
  // A continuation is its own attention segment: positions restart at 0.
  EXPECT_EQ(b.pos, (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(b.seg, (std::vector<int64_t>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(b.cu, (std::vector<int64_t>{0, 3, 6, 9, 12}));
  EXPECT_EQ(b.result.max_seqlen, 3);
}

TEST(LoaderAssemblyTest, CrossDocumentTargetsLinkDocumentsButNotPadding) {
  MemoryTokenSource src = Docs();
  AssemblyOptions opt;
  opt.batch_size = 1;
  opt.seq_len = 10;
  opt.cross_document_targets = true;
  Built b = Build(opt, src, {Row{{{0, 0, 0, 5}, {0, 1, 0, 3}}}});
  ASSERT_TRUE(b.status.ok());
  EXPECT_EQ(b.labels, (std::vector<int64_t>{12, 13, 14, 15, 21, 22, 23, X, X, X}));
}

TEST(LoaderAssemblyTest, DenseMaskIsCausalBlockDiagonal) {
  MemoryTokenSource src = Docs();
  AssemblyOptions opt;
  opt.batch_size = 1;
  opt.seq_len = 4;
  opt.attention_mask = true;
  Built b = Build(opt, src, {Row{{{0, 1, 0, 2}, {0, 0, 0, 1}}}});
  ASSERT_TRUE(b.status.ok());
  EXPECT_EQ(b.mask, (std::vector<int64_t>{1, 0, 0, 0,  //
                                          1, 1, 0, 0,  //
                                          0, 0, 1, 0,  //
                                          0, 0, 0, 0}));
}

TEST(LoaderAssemblyTest, FailPolicyNamesTheDocument) {
  auto inner = std::make_shared<MemoryTokenSource>(Docs());
  testing::FaultyTokenSource src(inner, /*bad_document=*/1);
  AssemblyOptions opt;
  opt.batch_size = 1;
  opt.seq_len = 10;
  Built b = Build(opt, src, {Row{{{0, 0, 0, 5}, {0, 1, 0, 3}}}});
  EXPECT_EQ(b.status.code(), StatusCode::kIOError);
  EXPECT_NE(b.status.message().find("docs"), std::string::npos) << b.status.message();
  EXPECT_NE(b.status.message().find("document 1"), std::string::npos) << b.status.message();
}

TEST(LoaderAssemblyTest, SkipPolicyMasksTheBadDocumentAndCountsIt) {
  auto inner = std::make_shared<MemoryTokenSource>(Docs());
  testing::FaultyTokenSource src(inner, /*bad_document=*/1);
  AssemblyOptions opt;
  opt.batch_size = 1;
  opt.seq_len = 10;
  opt.skip_bad_documents = true;
  opt.cross_document_targets = true;
  Built b = Build(opt, src, {Row{{{0, 0, 0, 5}, {0, 1, 0, 3}}}});
  ASSERT_TRUE(b.status.ok()) << b.status.ToString();
  EXPECT_EQ(b.result.skipped_documents, 1u);
  EXPECT_EQ(b.ids, (std::vector<int64_t>{11, 12, 13, 14, 15, 0, 0, 0, 0, 0}));
  EXPECT_EQ(b.labels, (std::vector<int64_t>{12, 13, 14, 15, X, X, X, X, X, X}));
  EXPECT_EQ(b.seg, (std::vector<int64_t>{1, 1, 1, 1, 1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(b.cu, (std::vector<int64_t>{0, 5, 8, 10}));
}

TEST(LoaderAssemblyTest, PieceOutsideItsDocumentIsCorruption) {
  MemoryTokenSource src = Docs();
  AssemblyOptions opt;
  opt.batch_size = 1;
  opt.seq_len = 10;
  Built b = Build(opt, src, {Row{{{0, 1, 2, 4}}}});
  EXPECT_EQ(b.status.code(), StatusCode::kCorruption);
}

// doc0 = 11..15 trained from 13; doc1 = 21..23 trained from 22; doc2 = 31..36 trained from 34.
testing::MaskedSource Chats() {
  return testing::MaskedSource({{11, 12, 13, 14, 15}, {21, 22, 23}, {31, 32, 33, 34, 35, 36}},
                               {{0, 0, 1, 1, 1}, {0, 1, 1}, {0, 0, 0, 1, 1, 1}});
}

TEST(LoaderAssemblyTest, LabelsAreTheNextTokenWhereItIsTrained) {
  testing::MaskedSource src = Chats();
  for (TokenDType dtype : {TokenDType::kInt64, TokenDType::kInt32}) {
    AssemblyOptions opt;
    opt.batch_size = 1;
    opt.seq_len = 10;
    opt.dtype = dtype;
    opt.loss_mask = true;
    Built b = Build(opt, src, {Row{{{0, 0, 0, 5}, {0, 1, 0, 3}}}});
    ASSERT_TRUE(b.status.ok()) << b.status.ToString();
    EXPECT_EQ(b.ids, (std::vector<int64_t>{11, 12, 13, 14, 15, 21, 22, 23, 0, 0}));
    // label t is token t+1 when token t+1 is trained: the first trained token's label sits on
    // the untrained token before it; a document's last token and padding have none.
    EXPECT_EQ(b.labels, (std::vector<int64_t>{X, 13, 14, 15, X, 22, 23, X, X, X}));
    EXPECT_EQ(b.loss_mask, (std::vector<int64_t>{0, 1, 1, 1, 0, 1, 1, 0, 0, 0}));
    EXPECT_EQ(b.result.trained_tokens, 5u);
    EXPECT_EQ(b.result.real_tokens, 8u);
  }
}

TEST(LoaderAssemblyTest, AMaskedSplitDocumentTakesItsNextTrainedToken) {
  testing::MaskedSource src = Chats();
  AssemblyOptions opt;
  opt.batch_size = 2;
  opt.seq_len = 3;
  opt.loss_mask = true;
  // doc2 cut after its third token: the cut's label is token 3 (34, trained).
  Built b = Build(opt, src, {Row{{{0, 2, 0, 3}}}, Row{{{0, 2, 3, 3}}}});
  ASSERT_TRUE(b.status.ok()) << b.status.ToString();
  EXPECT_EQ(b.labels, (std::vector<int64_t>{X, X, 34, 35, 36, X}));
  EXPECT_EQ(b.loss_mask, (std::vector<int64_t>{0, 0, 1, 1, 1, 0}));
  // Cut after the second token instead: its target (33) is not trained; the second piece (33..35)
  // is cut too, and its last label is 36 (trained).
  b = Build(opt, src, {Row{{{0, 2, 0, 2}}}, Row{{{0, 2, 2, 3}}}});
  ASSERT_TRUE(b.status.ok()) << b.status.ToString();
  EXPECT_EQ(b.labels, (std::vector<int64_t>{X, X, X, 34, 35, 36}));
  EXPECT_EQ(b.loss_mask, (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(b.result.trained_tokens, 3u);
}

TEST(LoaderAssemblyTest, SourceCountsOfChatDataCountTheLossMask) {
  testing::MaskedSource src = Chats();
  AssemblyOptions opt;
  opt.batch_size = 1;
  opt.seq_len = 10;
  opt.loss_mask = true;
  Built b = Build(opt, std::vector<const DocumentReader*>{&src, &src},
                  {Row{{{0, 0, 0, 5}, {1, 1, 0, 3}}}});
  ASSERT_TRUE(b.status.ok()) << b.status.ToString();
  // As in LabelsAreTheNextTokenWhereItIsTrained: 3 trained labels in doc0, 2 in doc1.
  ASSERT_EQ(b.result.sources.size(), 2u);
  EXPECT_EQ(b.result.sources[0].trained_tokens, 3u);
  EXPECT_EQ(b.result.sources[1].trained_tokens, 2u);
  EXPECT_EQ(b.result.trained_tokens, 5u);
}

TEST(LoaderAssemblyTest, CrossDocumentTargetsRespectTheMask) {
  testing::MaskedSource src = Chats();
  testing::MaskedSource first_trained({{11, 12}, {21, 22}}, {{0, 1}, {1, 1}});
  AssemblyOptions opt;
  opt.batch_size = 1;
  opt.seq_len = 5;
  opt.loss_mask = true;
  opt.cross_document_targets = true;
  Built b = Build(opt, src, {Row{{{0, 0, 0, 2}, {0, 1, 0, 3}}}});  // doc1's first: untrained
  ASSERT_TRUE(b.status.ok()) << b.status.ToString();
  EXPECT_EQ(b.labels, (std::vector<int64_t>{X, 13, 22, 23, X}));
  EXPECT_EQ(b.loss_mask, (std::vector<int64_t>{0, 1, 1, 1, 0}));
  b = Build(opt, first_trained, {Row{{{0, 0, 0, 2}, {0, 1, 0, 2}}}});
  ASSERT_TRUE(b.status.ok()) << b.status.ToString();
  EXPECT_EQ(b.labels, (std::vector<int64_t>{12, 21, 22, X, X}));
  EXPECT_EQ(b.loss_mask, (std::vector<int64_t>{1, 1, 1, 0, 0}));
}

TEST(LoaderAssemblyTest, ASourceWithoutAMaskIsAllTrainedBesideChatData) {
  testing::MaskedSource chats = Chats();
  MemoryTokenSource text = Docs();
  AssemblyOptions opt;
  opt.batch_size = 1;
  opt.seq_len = 9;
  opt.loss_mask = true;
  Built b = Build(opt, {&chats, &text}, {Row{{{0, 1, 0, 3}, {1, 0, 0, 5}}}});
  ASSERT_TRUE(b.status.ok()) << b.status.ToString();
  EXPECT_EQ(b.labels, (std::vector<int64_t>{22, 23, X, 12, 13, 14, 15, X, X}));
  EXPECT_EQ(b.loss_mask, (std::vector<int64_t>{1, 1, 0, 1, 1, 1, 1, 0, 0}));
  EXPECT_EQ(b.result.trained_tokens, 6u);
  // Without the option the mask is not read and every next token is a label.
  opt.loss_mask = false;
  b = Build(opt, {&chats, &text}, {Row{{{0, 1, 0, 3}, {1, 0, 0, 5}}}});
  EXPECT_EQ(b.labels, (std::vector<int64_t>{22, 23, X, 12, 13, 14, 15, X, X}));
  EXPECT_TRUE(b.loss_mask.empty());
  EXPECT_EQ(b.result.trained_tokens, 6u);
}

}  // namespace
}  // namespace stoker::loader
