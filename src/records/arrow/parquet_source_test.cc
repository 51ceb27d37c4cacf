// Parquet and Arrow IPC record sources on files that Arrow C++'s own writers make here (the
// reference-writer tests against pyarrow and datasets are tests/python/test_records_arrow.py).
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/ipc/writer.h>
#include <gtest/gtest.h>
#include <parquet/arrow/writer.h>

#include "common/file_util.h"
#include "common/temp_dir.h"
#include "records/arrow_sources.h"
#include "records/record_source.h"
#include "records/test_util.h"

namespace stoker {
namespace {

std::shared_ptr<arrow::Table> SampleTable() {
  arrow::StringBuilder text;
  arrow::ListBuilder ids(arrow::default_memory_pool(), std::make_shared<arrow::Int32Builder>());
  auto* id_values = static_cast<arrow::Int32Builder*>(ids.value_builder());
  arrow::Int64Builder label;
  for (int i = 0; i < 5; ++i) {
    if (i == 1) {
      EXPECT_TRUE(text.AppendNull().ok());
    } else {
      EXPECT_TRUE(text.Append(i == 3 ? std::string() : "héllo " + std::to_string(i)).ok());
    }
    EXPECT_TRUE(ids.Append().ok());
    for (int j = 0; j < i; ++j) EXPECT_TRUE(id_values->Append(100 * i + j).ok());
    EXPECT_TRUE(label.Append(i * 7).ok());
  }
  std::shared_ptr<arrow::Array> a, b, c;
  EXPECT_TRUE(text.Finish(&a).ok());
  EXPECT_TRUE(ids.Finish(&b).ok());
  EXPECT_TRUE(label.Finish(&c).ok());
  auto schema = arrow::schema({arrow::field("text", arrow::utf8()),
                               arrow::field("input_ids", arrow::list(arrow::int32())),
                               arrow::field("label", arrow::int64())});
  return arrow::Table::Make(schema, {a, b, c});
}

class ArrowSourcesTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = std::move(*TempDir::Create("stoker-arrow-")); }

  std::string WriteParquet(const std::string& name, int64_t row_group_rows) {
    std::string path = dir_->Join(name);
    auto out = arrow::io::FileOutputStream::Open(path).ValueOrDie();
    EXPECT_TRUE(parquet::arrow::WriteTable(*SampleTable(), arrow::default_memory_pool(), out,
                                           row_group_rows)
                    .ok());
    EXPECT_TRUE(out->Close().ok());
    return path;
  }
  std::string WriteIpcStream(const std::string& name) {
    std::string path = dir_->Join(name);
    auto out = arrow::io::FileOutputStream::Open(path).ValueOrDie();
    auto table = SampleTable();
    auto writer = arrow::ipc::MakeStreamWriter(out, table->schema()).ValueOrDie();
    EXPECT_TRUE(writer->WriteTable(*table, 2).ok());
    EXPECT_TRUE(writer->Close().ok());
    EXPECT_TRUE(out->Close().ok());
    return path;
  }
  std::unique_ptr<TempDir> dir_;
};

void ExpectSampleRows(const std::vector<Record>& rows) {
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].Find("text")->bytes, "héllo 0");
  EXPECT_EQ(rows[0].Find("text")->type, FieldType::kString);
  EXPECT_EQ(rows[1].Find("text"), nullptr);  // null: left out
  EXPECT_EQ(rows[3].Find("text")->bytes, "");
  EXPECT_EQ(rows[2].Find("input_ids")->type, FieldType::kTokens);
  EXPECT_EQ(rows[2].Find("input_ids")->ints, (std::vector<int64_t>{200, 201}));
  EXPECT_TRUE(rows[0].Find("input_ids")->ints.empty());
  EXPECT_EQ(rows[4].Find("label")->ints, (std::vector<int64_t>{28}));
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i].key, std::to_string(i));
}

TEST_F(ArrowSourcesTest, ParquetRowGroupsAreShards) {
  ASSERT_TRUE(ArrowReadersAvailable());
  std::string path = WriteParquet("t.parquet", 2);
  EXPECT_EQ(DetectRecordFormat(path), RecordFormat::kParquet);
  auto shards = ExpandRecordShards({path}, RecordFormat::kAuto);
  ASSERT_TRUE(shards.ok()) << shards.status().ToString();
  ASSERT_EQ(shards->size(), 3u);  // 2 + 2 + 1 rows
  EXPECT_EQ((*shards)[2].part, 2);
  auto second = OpenRecordShard((*shards)[1]);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  auto rows = testing_util::ReadAllRecords(**second);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].key, "2");  // the file row number
  auto all = OpenRecordSource({path});
  ASSERT_TRUE(all.ok());
  auto every = testing_util::ReadAllRecords(**all);
  ASSERT_TRUE(every.ok()) << every.status().ToString();
  ExpectSampleRows(*every);
}

TEST_F(ArrowSourcesTest, ArrowIpcStreamAndHfDirectory) {
  std::string path = WriteIpcStream("data-00000-of-00001.arrow");
  testing_util::WriteBytes(dir_->Join("state.json"),
                           R"({"_data_files": [{"filename": "data-00000-of-00001.arrow"}]})");
  EXPECT_EQ(DetectRecordFormat(dir_->path()), RecordFormat::kArrow);
  auto source = OpenRecordSource({dir_->path()});
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  auto rows = testing_util::ReadAllRecords(**source);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ExpectSampleRows(*rows);
  EXPECT_EQ((*rows)[0].source, path);
}

TEST_F(ArrowSourcesTest, TokenColumnOfParquetAndIpc) {
  for (auto [path, format] : {std::pair{WriteParquet("t.parquet", 2), RecordFormat::kParquet},
                              std::pair{WriteIpcStream("t.arrow"), RecordFormat::kArrow}}) {
    auto column = ReadArrowTokenColumn(path, format, "input_ids");
    ASSERT_TRUE(column.ok()) << column.status().ToString();
    EXPECT_EQ(column->offsets, (std::vector<uint64_t>{0, 0, 1, 3, 6, 10}));
    EXPECT_EQ(column->tokens[0], 100);
    EXPECT_EQ(column->tokens[9], 403);
    auto missing = ReadArrowTokenColumn(path, format, "tokens");
    EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(missing.status().message().find("'tokens'"), std::string::npos);
    EXPECT_NE(missing.status().message().find("input_ids"), std::string::npos);
    auto text = ReadArrowTokenColumn(path, format, "text");
    EXPECT_EQ(text.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST_F(ArrowSourcesTest, DamagedParquetFooterIsCorruptionNamingFileAndOffset) {
  std::string path = WriteParquet("t.parquet", 2);
  std::string bytes = *ReadFileToString(path);
  // The footer length field points before the start of the file.
  std::string bad = bytes;
  bad[bad.size() - 8] = '\xff';
  bad[bad.size() - 7] = '\xff';
  testing_util::WriteBytes(dir_->Join("bad.parquet"), bad);
  // Listing gives the file as one shard; opening it is the error (so a skip policy applies).
  auto open = [&](const std::string& name) -> Status {
    auto shards = ExpandRecordShards({dir_->Join(name)}, RecordFormat::kAuto);
    if (!shards.ok()) return shards.status();
    EXPECT_EQ(shards->size(), 1u);
    EXPECT_EQ((*shards)[0].part, -1);
    return OpenRecordShard((*shards)[0]).status();
  };
  Status st = open("bad.parquet");
  ASSERT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("bad.parquet"), std::string::npos);
  EXPECT_NE(st.message().find("byte offset " + std::to_string(bad.size() - 8)), std::string::npos)
      << st.message();
  // Not Parquet at all, and truncated in the middle.
  testing_util::WriteBytes(dir_->Join("short.parquet"), bytes.substr(0, bytes.size() / 2));
  EXPECT_EQ(open("short.parquet").code(), StatusCode::kCorruption);
  testing_util::WriteBytes(dir_->Join("tiny.parquet"), "PAR1");
  EXPECT_EQ(open("tiny.parquet").code(), StatusCode::kCorruption);
}

TEST_F(ArrowSourcesTest, DamagedPagesAndStreamsAreErrorsNotCrashes) {
  std::string path = WriteParquet("t.parquet", 5);
  std::string bytes = *ReadFileToString(path);
  // Flip bytes through the column data (not the footer): every outcome is a value or an error.
  for (size_t at = 4; at + 200 < bytes.size(); at += 7) {
    std::string bad = bytes;
    bad[at] = static_cast<char>(bad[at] ^ 0x5a);
    RecordShard shard{path, RecordFormat::kParquet, 0, {}, 0};
    auto source = OpenParquetShard(shard, MemorySource("m.parquet", bad));
    if (!source.ok()) continue;
    (void)testing_util::ReadAllRecords(**source);
  }
  std::string ipc = *ReadFileToString(WriteIpcStream("s.arrow"));
  for (size_t cut : {size_t{3}, size_t{9}, ipc.size() / 2, ipc.size() - 3}) {
    RecordShard shard{"s.arrow", RecordFormat::kArrow, 0, {}, -1};
    auto source = OpenArrowIpcShard(shard, MemorySource("s.arrow", ipc.substr(0, cut)));
    if (!source.ok()) {
      EXPECT_NE(source.status().message().find("s.arrow"), std::string::npos);
      continue;
    }
    auto rows = testing_util::ReadAllRecords(**source);
    if (!rows.ok()) EXPECT_NE(rows.status().message().find("s.arrow"), std::string::npos);
  }
}

// Every byte of an IPC stream flipped in turn, the list offsets included (a flipped offset once
// reached vector::reserve with a negative length): each outcome is rows or an error naming the
// file, never a crash.
TEST_F(ArrowSourcesTest, EveryFlippedByteOfAnIpcStreamIsRowsOrAnError) {
  std::string ipc = *ReadFileToString(WriteIpcStream("s.arrow"));
  int errors = 0;
  for (size_t at = 0; at < ipc.size(); ++at) {
    std::string bad = ipc;
    bad[at] = static_cast<char>(bad[at] ^ 0x80);
    RecordShard shard{"s.arrow", RecordFormat::kArrow, 0, {}, -1};
    auto source = OpenArrowIpcShard(shard, MemorySource("s.arrow", bad));
    Status status = source.ok() ? testing_util::ReadAllRecords(**source).status() : source.status();
    if (!status.ok()) {
      ++errors;
      EXPECT_NE(status.message().find("s.arrow"), std::string::npos) << status.message();
    }
  }
  EXPECT_GT(errors, 0);
}

TEST_F(ArrowSourcesTest, DatasetDictNamesItsSplits) {
  testing_util::WriteBytes(dir_->Join("dataset_dict.json"), R"({"splits": ["train", "test"]})");
  auto shards = ExpandRecordShards({dir_->path()}, RecordFormat::kAuto);
  ASSERT_EQ(shards.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(shards.status().message().find("train, test"), std::string::npos)
      << shards.status().message();
}

}  // namespace
}  // namespace stoker
