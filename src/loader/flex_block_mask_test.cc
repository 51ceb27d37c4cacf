#include "loader/flex_block_mask.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace stoker::loader {
namespace {

// The reference: the dense document mask of every token pair, padded with "no" to whole tiles,
// summed per tile (as torch's _convert_mask_to_block_mask), and ordered by a stable sort (as
// _dense_to_ordered).
struct Tables {
  std::vector<int32_t> buffer;
  FlexTableShape shape;
};

Tables Reference(const FlexMaskSpec& spec, int rows, int seq_len, const std::vector<int32_t>& cu) {
  const int bs = spec.block_size, nb = (seq_len + bs - 1) / bs;
  Tables t{std::vector<int32_t>(), FlexTableShape{rows, nb}};
  t.buffer.assign(t.shape.total_elements(), -1);
  FlexBlockTables v = FlexBlockTables::Slice(t.shape, t.buffer.data());
  auto segment_of = [&](int64_t flat) {
    return std::upper_bound(cu.begin(), cu.end(), flat) - cu.begin();
  };
  for (int r = 0; r < rows; ++r) {
    std::vector<int> sum(nb * nb, 0);
    for (int q = 0; q < seq_len; ++q) {
      for (int k = 0; k <= q; ++k) {
        const int64_t fq = int64_t{r} * seq_len + q, fk = int64_t{r} * seq_len + k;
        bool ok = segment_of(fq) == segment_of(fk);
        if (spec.kind == FlexMaskKind::kSlidingWindow) ok = ok && q - k < spec.window;
        if (ok) ++sum[(q / bs) * nb + k / bs];
      }
    }
    auto order = [&](bool by_query, int line, int want, int32_t* num, int32_t* idx) {
      std::vector<int> flags(nb);
      for (int n = 0; n < nb; ++n) {
        const int s = by_query ? sum[line * nb + n] : sum[n * nb + line];
        flags[n] = want == 2 ? s == bs * bs : (s > 0 && s < bs * bs);
      }
      std::vector<int> ids(nb);
      for (int n = 0; n < nb; ++n) ids[n] = n;
      std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) { return flags[a] > flags[b]; });
      *num = static_cast<int32_t>(std::count(flags.begin(), flags.end(), 1));
      std::copy(ids.begin(), ids.end(), idx);
    };
    for (int line = 0; line < nb; ++line) {
      const int64_t n = int64_t{r} * nb + line, x = n * nb;
      order(true, line, 1, &v.kv_num_blocks[n], &v.kv_indices[x]);
      order(true, line, 2, &v.full_kv_num_blocks[n], &v.full_kv_indices[x]);
      order(false, line, 1, &v.q_num_blocks[n], &v.q_indices[x]);
      order(false, line, 2, &v.full_q_num_blocks[n], &v.full_q_indices[x]);
    }
  }
  return t;
}

Tables Built(const FlexMaskSpec& spec, int rows, int seq_len, const std::vector<int32_t>& cu) {
  Result<FlexTableShape> shape = FlexTableShapeFor(spec, rows, seq_len);
  EXPECT_TRUE(shape.ok()) << shape.status().ToString();
  Tables t{std::vector<int32_t>(shape->total_elements(), -7), *shape};
  Status s = BuildFlexBlockTables(spec, rows, seq_len, cu,
                                  FlexBlockTables::Slice(t.shape, t.buffer.data()));
  EXPECT_TRUE(s.ok()) << s.ToString();
  return t;
}

// Random segments per row (documents and a padding run at the end), as the loader's cu_seqlens.
std::vector<int32_t> RandomSegments(std::mt19937& rng, int rows, int seq_len, int max_doc) {
  std::vector<int32_t> cu{0};
  std::uniform_int_distribution<int> len(1, max_doc);
  for (int r = 0; r < rows; ++r) {
    int at = 0;
    while (at < seq_len) {
      at = std::min(seq_len, at + len(rng));
      cu.push_back(r * seq_len + at);
    }
  }
  return cu;
}

TEST(FlexBlockMaskTest, EqualsTheDenseMaskTilesForRandomBatches) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const int rows = 1 + trial % 3;
    const int block = trial % 2 ? 16 : 8;
    const int seq_len = block * (2 + trial % 5) + (trial % 4 == 0 ? 5 : 0);  // some partial tiles
    FlexMaskSpec spec{block, trial % 3 == 2 ? FlexMaskKind::kSlidingWindow : FlexMaskKind::kCausal,
                      1 + trial % 29};
    std::vector<int32_t> cu = RandomSegments(rng, rows, seq_len, trial % 2 ? 40 : 9);
    Tables want = Reference(spec, rows, seq_len, cu);
    Tables got = Built(spec, rows, seq_len, cu);
    ASSERT_EQ(got.buffer, want.buffer) << "trial " << trial << " seq_len " << seq_len;
  }
}

TEST(FlexBlockMaskTest, OneDocumentIsTheCausalMask) {
  // 4 tiles of 8 over one 32-token document: the diagonal is partial, below it full.
  Tables t = Built(FlexMaskSpec{8}, 1, 32, {0, 32});
  FlexBlockTables v = FlexBlockTables::Slice(t.shape, t.buffer.data());
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(v.kv_num_blocks[i], 1);
    EXPECT_EQ(v.kv_indices[i * 4], i);
    EXPECT_EQ(v.full_kv_num_blocks[i], i);
  }
}

TEST(FlexBlockMaskTest, RejectsWhatIsNoBatchBoundary) {
  std::vector<int32_t> buffer(1000);
  FlexMaskSpec spec{8};
  FlexTableShape shape{2, 2};
  FlexBlockTables v = FlexBlockTables::Slice(shape, buffer.data());
  Status crosses = BuildFlexBlockTables(spec, 2, 16, std::vector<int32_t>{0, 20, 32}, v);
  EXPECT_NE(crosses.message().find("crosses rows"), std::string::npos) << crosses.ToString();
  Status short_end = BuildFlexBlockTables(spec, 2, 16, std::vector<int32_t>{0, 16, 30}, v);
  EXPECT_NE(short_end.message().find("rows * seq_len (32)"), std::string::npos);
  EXPECT_FALSE(BuildFlexBlockTables(FlexMaskSpec{8, FlexMaskKind::kSlidingWindow, 0}, 2, 16,
                                    std::vector<int32_t>{0, 16, 32}, v)
                   .ok());
  EXPECT_FALSE(ParseFlexMaskKind("document").ok());
}

}  // namespace
}  // namespace stoker::loader
