// The engine seam as a C++ user sees it: only stoker/ headers (the ctest public_api_headers_only
// compiles this file with include/ as its only include path). A stream loader opened through
// stoker/stream.h, and the engine run over a hand-made planner and reader (stoker/planner.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stoker/loader.h"
#include "stoker/planner.h"
#include "stoker/stream.h"

namespace {

namespace fs = std::filesystem;

fs::path FreshDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

stoker::LoaderOptions SmallOptions() {
  stoker::LoaderOptions o;
  o.batch_size = 2;
  o.seq_len = 16;
  o.num_workers = 2;
  o.pin_memory = false;
  o.monitor_warnings = false;
  return o;
}

std::vector<int64_t> Ids(const stoker::LoaderBatch& b) {
  const stoker::TensorView v = b.input_ids();
  const auto* p = static_cast<const int64_t*>(v.data);
  return std::vector<int64_t>(p, p + v.shape[0] * v.shape[1]);
}

TEST(PublicApi, StreamLoaderOpensThroughThePublicHeader) {
  const fs::path dir = FreshDir("stoker-public-stream");
  std::string text;
  {
    std::ofstream out(dir / "docs.jsonl");
    for (int i = 0; i < 40; ++i) {
      const std::string doc = "document number " + std::to_string(i);
      out << "{\"text\": \"" << doc << "\"}\n";
      text += doc;
    }
  }
  stoker::StreamOptions so;
  so.inputs = {dir.string()};
  so.tokenizer = "bytes";
  so.scan_cache_dir = "off";
  stoker::Result<std::unique_ptr<stoker::Loader>> opened =
      stoker::OpenStreamLoader(so, SmallOptions());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  stoker::Loader& loader = **opened;
  uint64_t batches = 0, real = 0;
  for (;;) {
    auto b = loader.Next();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    if (!b->has_value()) break;
    ++batches;
    real += (*b)->real_tokens();
    for (int64_t id : Ids(**b)) {
      // The bytes tokenizer: ids are UTF-8 bytes of the text, and 256 (EOS) ends a document.
      EXPECT_TRUE(id == 256 || text.find(static_cast<char>(id)) != std::string::npos) << id;
    }
  }
  EXPECT_GT(batches, 0u);
  EXPECT_EQ(real, batches * 2 * 16);  // concat packing: no padding
  EXPECT_FALSE(loader.State().fingerprint.empty());

  // What Python and the CLI ask of a stream, through the public planner: steps per epoch (the
  // batches just delivered), fingerprint, a state for any position, provenance, elastic states.
  const stoker::BatchPlanner& planner = loader.planner();
  EXPECT_EQ(loader.plan(), nullptr);
  stoker::Result<uint64_t> steps = planner.StepsPerEpoch(0);
  ASSERT_TRUE(steps.ok()) << steps.status().ToString();
  EXPECT_EQ(*steps, batches);
  EXPECT_EQ(planner.Fingerprint(), loader.State().fingerprint);
  EXPECT_EQ(planner.MakeState({0, 2}).fingerprint, planner.Fingerprint());
  auto explained = loader.Explain({0, 0});
  ASSERT_TRUE(explained.ok()) << explained.status().ToString();
  EXPECT_EQ(explained->rows.size(), 2u);
  auto elastic = planner.ElasticState({planner.MakeState({0, 2})});
  ASSERT_TRUE(elastic.ok()) << elastic.status().ToString();
  EXPECT_TRUE(loader.Restore(*elastic).ok());

  // The planner alone gives the same steps; the scan summary says what the pre-scan read.
  auto alone = stoker::OpenStreamPlanner(so, SmallOptions());
  ASSERT_TRUE(alone.ok()) << alone.status().ToString();
  EXPECT_EQ(*(*alone)->StepsPerEpoch(0), batches);
  stoker::StreamScanSummary scan;
  ASSERT_TRUE(stoker::OpenStreamLoader(so, SmallOptions(), nullptr, &scan).ok());
  EXPECT_EQ(scan.files, 1u);
  EXPECT_EQ(scan.files_from_scan, 0u);  // scan_cache_dir "off"
  fs::remove_all(dir);
}

// One document per number d, of length d + 1, whose tokens are d * 1000 + position.
class CountingReader final : public stoker::DocumentReader {
 public:
  const std::string& path() const override { return name_; }
  std::optional<uint64_t> FindDocumentLength(uint64_t doc) const override {
    if (doc >= 100) return std::nullopt;
    return doc + 1;
  }
  stoker::Status Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const override {
    return ReadT(doc, offset, count, out);
  }
  stoker::Status Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const override {
    return ReadT(doc, offset, count, out);
  }

 private:
  template <typename T>
  stoker::Status ReadT(uint64_t doc, uint64_t offset, uint64_t count, T* out) const {
    for (uint64_t i = 0; i < count; ++i) out[i] = static_cast<T>(doc * 1000 + offset + i);
    return stoker::Status::OK();
  }
  std::string name_ = "counting";
};

// Step k: two rows, row r holds document 2k + r whole (one step per 2 rows, 5 steps per epoch).
class TwoDocumentsPerStep final : public stoker::BatchPlanner {
 public:
  stoker::PlanPosition Normalize(const stoker::PlanPosition& pos) const override {
    return pos.rows_consumed >= 10 ? stoker::PlanPosition{pos.epoch + 1, 0} : pos;
  }
  stoker::PlanPosition Advance(const stoker::PlanPosition& pos) const override {
    return Normalize({pos.epoch, pos.rows_consumed + 2});
  }
  stoker::Status BatchAt(const stoker::PlanPosition& pos, stoker::Batch* out) const override {
    out->position = pos;
    out->step = pos.rows_consumed / 2;
    out->rows.assign(2, stoker::Row{});
    for (uint64_t r = 0; r < 2; ++r) {
      const uint64_t doc = pos.rows_consumed + r;
      out->rows[r].pieces.push_back({0, doc, 0, doc + 1});
    }
    return stoker::Status::OK();
  }
  stoker::PlanState MakeState(const stoker::PlanPosition& pos) const override {
    stoker::PlanState s;
    s.position = pos;
    s.fingerprint = "two-per-step";
    return s;
  }
};

TEST(PublicApi, EngineRunsAHandMadePlannerAndReader) {
  auto planner = std::make_shared<TwoDocumentsPerStep>();
  auto reader = std::make_shared<CountingReader>();
  stoker::PlanState resume;
  resume.position = {0, 6};  // step 3
  auto opened = stoker::Loader::OpenWithPlanner(planner, {reader}, SmallOptions(), &resume);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ((*opened)->plan(), nullptr);
  auto b = (*opened)->Next();
  ASSERT_TRUE(b.ok() && b->has_value()) << b.status().ToString();
  EXPECT_EQ((*b)->step(), 3u);
  const std::vector<int64_t> ids = Ids(**b);
  // Row 0 is document 6 (7 tokens), row 1 document 7 (8 tokens), each padded to 16.
  EXPECT_EQ(ids[0], 6000);
  EXPECT_EQ(ids[6], 6006);
  EXPECT_EQ(ids[16], 7000);
  EXPECT_EQ(ids[23], 7007);
  EXPECT_EQ((*b)->real_tokens(), 15u);
  EXPECT_EQ((*b)->state_after().position.rows_consumed, 8u);
}

// The look-ahead is the planner's: the loader tells it where delivery starts (open, Restore),
// each batch it delivers, and that it stops; a planner without them needs nothing.
class LookingAhead final : public stoker::BatchPlanner {
 public:
  stoker::PlanPosition Normalize(const stoker::PlanPosition& pos) const override {
    return inner_.Normalize(pos);
  }
  stoker::PlanPosition Advance(const stoker::PlanPosition& pos) const override {
    return inner_.Advance(pos);
  }
  stoker::Status BatchAt(const stoker::PlanPosition& pos, stoker::Batch* out) const override {
    return inner_.BatchAt(pos, out);
  }
  stoker::PlanState MakeState(const stoker::PlanPosition& pos) const override {
    return inner_.MakeState(pos);
  }
  void Started(const stoker::PlanPosition& pos) const override {
    calls_.push_back("start " + std::to_string(pos.rows_consumed));
  }
  void Delivered(const stoker::PlanPosition& next) const override {
    calls_.push_back("delivered " + std::to_string(next.rows_consumed));
  }
  void Stopped() const override { calls_.push_back("stop"); }
  std::vector<std::string>& calls() const { return calls_; }

 private:
  TwoDocumentsPerStep inner_;
  mutable std::vector<std::string> calls_;  // the loader's consumer thread only
};

TEST(PublicApi, TheLoaderDrivesThePlannersLookAhead) {
  auto planner = std::make_shared<LookingAhead>();
  {
    stoker::PlanState resume;
    resume.position = {0, 4};
    auto opened = stoker::Loader::OpenWithPlanner(planner, {std::make_shared<CountingReader>()},
                                                  SmallOptions(), &resume);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    ASSERT_TRUE((*opened)->Next().ok());
    ASSERT_TRUE((*opened)->Next().ok());
    stoker::PlanState back;
    back.position = {0, 2};
    ASSERT_TRUE((*opened)->Restore(back).ok());
    ASSERT_TRUE((*opened)->Next().ok());
    EXPECT_EQ((*opened)->Explain({0, 0}).status().code(), stoker::StatusCode::kUnimplemented);
    EXPECT_EQ((*opened)->planner().StepsPerEpoch(0).status().code(),
              stoker::StatusCode::kUnimplemented);
  }
  EXPECT_EQ(planner->calls(), (std::vector<std::string>{"start 4", "delivered 6", "delivered 8",
                                                        "start 2", "delivered 4", "stop"}));
}

TEST(PublicApi, APieceNamingAMissingDocumentFailsItsBatch) {
  class OutOfRange final : public stoker::BatchPlanner {
   public:
    stoker::PlanPosition Normalize(const stoker::PlanPosition& p) const override { return p; }
    stoker::PlanPosition Advance(const stoker::PlanPosition& p) const override {
      return {p.epoch, p.rows_consumed + 2};
    }
    stoker::Status BatchAt(const stoker::PlanPosition& p, stoker::Batch* out) const override {
      out->position = p;
      out->rows.assign(2, stoker::Row{});
      out->rows[0].pieces.push_back({0, 500, 0, 4});  // the reader has 100 documents
      out->rows[1].pieces.push_back({0, 1, 0, 2});
      return stoker::Status::OK();
    }
    stoker::PlanState MakeState(const stoker::PlanPosition& p) const override { return {}; }
  };
  auto opened = stoker::Loader::OpenWithPlanner(
      std::make_shared<OutOfRange>(), {std::make_shared<CountingReader>()}, SmallOptions());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  auto b = (*opened)->Next();
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), stoker::StatusCode::kCorruption) << b.status().ToString();
}

}  // namespace
