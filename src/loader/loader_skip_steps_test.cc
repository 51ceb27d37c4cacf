// Loader::Open at a state with steps skipped (`stoker resume-edit --skip-steps`): every rank
// together serves the rest of the epoch exactly once, with the plan's tokens, but the skipped
// steps' rows, on the world that wrote the state and on another one whose step reaches into the
// skip (those rows padding: ids 0, labels -100). State() carries the skip until it is passed.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "loader/loader_test_util.h"
#include "plan/state_edit.h"
#include "stoker/loader.h"

namespace stoker::loader {
namespace {

using testing::Dump;

LoaderOptions SkipStepsOptions(uint32_t world_size, uint32_t rank) {
  LoaderOptions o;
  o.batch_size = 2;
  o.seq_len = 48;
  o.num_workers = 2;
  o.world_size = world_size;
  o.rank = rank;
  o.shuffle = ShuffleMode::kGlobal;
  o.pack = PackMode::kConcat;
  o.seed = 9;
  return o;
}

struct ServedRows {
  std::map<uint64_t, int> rows;  // global rows of epoch 0 served with the plan's tokens
  std::set<uint64_t> padding;    // global rows served empty
};

// Every rank of `world_size` opened at `state`, to the end of epoch 0; each row's tokens checked
// against the plan's.
ServedRows ServeFrom(const std::shared_ptr<MemoryTokenSource>& src, const PlanState& state,
                     uint32_t world_size) {
  ServedRows out;
  for (uint32_t rank = 0; rank < world_size; ++rank) {
    auto opened = Loader::Open({{"mem", src}}, SkipStepsOptions(world_size, rank), &state);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    if (!opened.ok()) return out;
    Loader& loader = **opened;
    const Plan& plan = *loader.plan();
    const uint64_t seq = plan.options().seq_len;
    for (PlanPosition start = loader.State().position;;) {
      auto r = loader.Next();
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      if (!r.ok() || !r->has_value()) break;
      const LoaderBatch& batch = **r;
      const testing::BatchDump got = Dump(batch);
      auto want = plan.GetBatchAt(start, rank);
      EXPECT_TRUE(want.ok());
      if (!want.ok()) break;
      for (size_t row = 0; row < want->rows.size(); ++row) {
        const uint64_t global = start.rows_consumed + rank * 2 + row;
        const std::vector<int64_t> ids(got.ids.begin() + row * seq,
                                       got.ids.begin() + (row + 1) * seq);
        const std::vector<int64_t> labels(got.labels.begin() + row * seq,
                                          got.labels.begin() + (row + 1) * seq);
        if (ids == std::vector<int64_t>(seq, 0) && labels == std::vector<int64_t>(seq, -100)) {
          out.padding.insert(global);
          continue;
        }
        std::vector<int64_t> expect;
        for (const RowPiece& p : want->rows[row].pieces) {
          const std::vector<int64_t>& doc = src->document(p.document);
          expect.insert(expect.end(), doc.begin() + p.offset, doc.begin() + p.offset + p.length);
        }
        expect.resize(seq, 0);
        EXPECT_EQ(ids, expect) << "rank " << rank << " row " << global;
        ++out.rows[global];
      }
      start = batch.position_after();
    }
  }
  return out;
}

TEST(LoaderSkipSteps, OpenedAtASkipServesTheRestOnceButTheSkippedRowsOnAnyWorld) {
  auto src = testing::RandomSource(33, 160, 60, "mem");
  // Written on 2 ranks (4 rows a step) after step 1 (row 8); steps 3..4 (rows [12, 20)) skipped.
  auto writer = Loader::Open({{"mem", src}}, SkipStepsOptions(2, 0));
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  const uint64_t rows_in_epoch = (*writer)->plan()->rows_in_epoch(0);
  ASSERT_GT(rows_in_epoch, 40u);
  PlanState at = (*writer)->plan()->MakeState({0, 8});
  at.world_size = 2;
  at.batch_size = 2;
  Result<std::string> edited = SkipStepsInState(at.ToJson(), 3, 4);
  ASSERT_TRUE(edited.ok()) << edited.status().ToString();
  Result<PlanState> state = PlanState::FromJson(*edited);
  ASSERT_TRUE(state.ok()) << state.status().ToString();

  for (const uint32_t world : {2u, 3u}) {
    SCOPED_TRACE("world size " + std::to_string(world));
    const ServedRows served = ServeFrom(src, *state, world);
    // 3 ranks (6 rows a step): the step at row 8 reaches rows 12, 13 (rank 2's: padding).
    EXPECT_EQ(served.padding, (world == 2 ? std::set<uint64_t>{} : std::set<uint64_t>{12, 13}));
    uint64_t end = 0;
    for (const auto& [row, times] : served.rows) {
      EXPECT_EQ(times, 1) << "row " << row;
      EXPECT_TRUE(row >= 8 && (row < 12 || row >= 20)) << "row " << row << " served";
      end = row + 1;
    }
    // Every row from the state to the last step's end but the skipped ones, and that end is
    // the epoch's but for less than one step (drop_last).
    EXPECT_EQ(served.rows.size(), end - 8 - 8);
    EXPECT_GT(end + 2 * world, rows_in_epoch);
  }

  // State() keeps the skip until the loader passes it, then leaves it out.
  auto loader = Loader::Open({{"mem", src}}, SkipStepsOptions(3, 0), &*state);
  ASSERT_TRUE(loader.ok()) << loader.status().ToString();
  EXPECT_EQ((*loader)->State().skips, state->skips);
  ASSERT_TRUE((*loader)->Next().ok());  // the step at row 8
  EXPECT_EQ((*loader)->State().position, (PlanPosition{0, 20}));
  EXPECT_TRUE((*loader)->State().skips.empty());
  // Restore at the edited state again: the skip is back.
  ASSERT_TRUE((*loader)->Restore(*state).ok());
  EXPECT_EQ((*loader)->State().skips, state->skips);
}

}  // namespace
}  // namespace stoker::loader
