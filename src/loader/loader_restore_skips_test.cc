// Loader::Restore at a state that quarantines documents (`stoker resume-edit --skip-documents`):
// from the restored step on, the quarantined documents' pieces are never served, every other
// piece of the epoch's remaining steps is served exactly once, with the plan's tokens; a later
// Restore at a state without them serves them again. Loader::Open and Restore resolve the ids in
// one place (DocumentSkips::ForState).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "loader/loader_test_util.h"
#include "stoker/loader.h"

namespace stoker::loader {
namespace {

using testing::Dump;

LoaderOptions SkipOptions() {
  LoaderOptions o;
  o.batch_size = 2;
  o.seq_len = 48;
  o.num_workers = 2;
  o.shuffle = ShuffleMode::kGlobal;
  o.pack = PackMode::kConcat;
  o.seed = 4;
  return o;
}

// Serves the rest of the epoch, checking each row's tokens against the plan's pieces less the
// quarantined documents; returns the tokens served per document.
std::map<uint64_t, uint64_t> ServeRest(Loader& loader, const MemoryTokenSource& src,
                                       const std::set<uint64_t>& quarantined) {
  std::map<uint64_t, uint64_t> served;
  const Plan& plan = *loader.plan();
  const uint64_t seq = plan.options().seq_len;
  while (true) {
    auto r = loader.Next();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok() || !r->has_value()) return served;
    const testing::BatchDump got = Dump(**r);
    auto want = plan.GetBatch(got.epoch, got.step, 0);
    EXPECT_TRUE(want.ok());
    if (!want.ok()) return served;
    for (size_t row = 0; row < want->rows.size(); ++row) {
      std::vector<int64_t> ids;
      for (const RowPiece& p : want->rows[row].pieces) {
        if (quarantined.count(p.document)) continue;
        served[p.document] += p.length;
        const std::vector<int64_t>& doc = src.document(p.document);
        ids.insert(ids.end(), doc.begin() + p.offset, doc.begin() + p.offset + p.length);
      }
      ids.resize(seq, 0);
      EXPECT_EQ(
          std::vector<int64_t>(got.ids.begin() + row * seq, got.ids.begin() + (row + 1) * seq), ids)
          << "step " << got.step << " row " << row;
    }
  }
}

TEST(LoaderRestoreSkips, RestoreAtAStateThatQuarantinesDocumentsLeavesThemOut) {
  auto src = testing::RandomSource(21, 120, 70, "mem");
  auto opened = Loader::Open({{"mem", src}}, SkipOptions());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Loader& loader = **opened;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(loader.Next().ok());
  PlanState state = loader.State();
  const PlanPosition at = state.position;
  // Quarantine two documents that the rest of the epoch serves (by "mem:SHARD:RECORD").
  std::map<uint64_t, uint64_t> rest;  // tokens per document from `at` to the epoch's end
  for (PlanPosition p = at; p.epoch == 0; p = loader.plan()->Advance(p)) {
    auto b = loader.plan()->GetBatchAt(p, 0);
    ASSERT_TRUE(b.ok());
    for (const Row& row : b->rows) {
      for (const RowPiece& piece : row.pieces) rest[piece.document] += piece.length;
    }
  }
  ASSERT_GT(rest.size(), 4u);
  const uint64_t a = rest.begin()->first, b = std::next(rest.begin(), 3)->first;
  state.skip_documents = {"mem:0:" + std::to_string(a), "mem:0:" + std::to_string(b)};
  ASSERT_TRUE(loader.Restore(state).ok());
  EXPECT_EQ(loader.State().skip_documents, state.skip_documents);  // carried into later states
  std::map<uint64_t, uint64_t> want = rest;
  want.erase(a);
  want.erase(b);
  EXPECT_EQ(ServeRest(loader, *src, {a, b}), want);  // the rest exactly once, those never

  // Back at the same step without the quarantine: every document of the rest again.
  state.skip_documents.clear();
  ASSERT_TRUE(loader.Restore(state).ok());
  EXPECT_TRUE(loader.State().skip_documents.empty());
  EXPECT_EQ(ServeRest(loader, *src, {}), rest);

  // An id that names no document: refused, naming it; the loader goes on where it was.
  state.skip_documents = {"mem:0:999999"};
  Status refused = loader.Restore(state);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("mem:0:999999"), std::string::npos) << refused.ToString();
}

}  // namespace
}  // namespace stoker::loader
