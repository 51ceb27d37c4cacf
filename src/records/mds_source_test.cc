#include "records/mds_source.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>

#include "common/file_util.h"
#include "common/temp_dir.h"
#include "records/mds_columns.h"
#include "records/test_util.h"

namespace stoker {
namespace {

const char* kConfig =
    R"({"column_encodings": ["int", "str", "ndarray:uint16"], "column_names": ["id", "text", "tokens"], "column_sizes": [8, null, null], "compression": null, "format": "mds", "hashes": [], "size_limit": 67108864, "version": 2})";

std::string MdsU32(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
std::string I64(int64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); }

std::string Sample(int64_t id, const std::string& text, const std::vector<uint16_t>& tokens) {
  std::string arr(1, 4);  // shape byte: ndim 1, uint8 dims
  arr += static_cast<char>(tokens.size());
  arr.append(reinterpret_cast<const char*>(tokens.data()), 2 * tokens.size());
  return MdsU32(text.size()) + MdsU32(arr.size()) + I64(id) + text + arr;
}

// The docs/formats-reference.md §2.6 shard: samples (7, "hi", [1,2,3]) and (8, "abc", [5]).
std::string Shard() {
  std::vector<std::string> samples = {Sample(7, "hi", {1, 2, 3}), Sample(8, "abc", {5})};
  std::string config = kConfig;
  uint32_t offset = 4 + 4 * 3 + config.size();
  std::string out = MdsU32(2);
  for (const std::string& s : samples) {
    out += MdsU32(offset);
    offset += s.size();
  }
  out += MdsU32(offset) + config;
  for (const std::string& s : samples) out += s;
  return out;
}

Result<std::vector<Record>> ReadShard(const std::string& path, RecordShard shard = {}) {
  shard.path = path;
  shard.format = RecordFormat::kMds;
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> src, OpenFileSource(path));
  STOKER_ASSIGN_OR_RETURN(auto source, OpenMdsShard(shard, std::move(src)));
  return testing_util::ReadAllRecords(*source);
}

class MdsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = std::move(*TempDir::Create("stoker-mds-")); }
  std::string Write(const std::string& name, const std::string& bytes) {
    std::string path = dir_->Join(name);
    testing_util::WriteBytes(path, bytes);
    return path;
  }
  std::unique_ptr<TempDir> dir_;
};

TEST_F(MdsTest, ReadsTheTestVectorShard) {
  std::string shard = Shard();
  uint32_t off0;
  std::memcpy(&off0, shard.data() + 4, 4);
  EXPECT_EQ(off0, 235u);
  EXPECT_EQ(Sample(7, "hi", {1, 2, 3}).size(), 26u);  // offsets 235 -> 261
  for (auto [name, bytes] : {std::pair<std::string, std::string>{"shard.00000.mds", shard},
                             {"shard.00001.mds.zstd", testing_util::Zstd(shard)},
                             {"shard.00002.mds.gz", testing_util::Gzip(shard)}}) {
    auto records = ReadShard(Write(name, bytes));
    ASSERT_TRUE(records.ok()) << name << ": " << records.status().ToString();
    ASSERT_EQ(records->size(), 2u);
    const Record& r = (*records)[0];
    ASSERT_EQ(r.fields.size(), 3u);
    EXPECT_EQ(r.fields[0].name, "id");
    EXPECT_EQ(r.fields[0].ints, (std::vector<int64_t>{7}));
    EXPECT_EQ(r.fields[1].type, FieldType::kString);
    EXPECT_EQ(r.fields[1].bytes, "hi");
    EXPECT_EQ(r.fields[2].type, FieldType::kTokens);
    EXPECT_EQ(r.fields[2].ints, (std::vector<int64_t>{1, 2, 3}));
    EXPECT_EQ((*records)[1].fields[1].bytes, "abc");
    EXPECT_EQ((*records)[1].offset_bytes, 261u);
  }
}

TEST_F(MdsTest, IndexListsShardsAndHashesAreChecked) {
  std::string shard = Shard();
  XXH64_canonical_t c;
  XXH64_canonicalFromHash(&c, XXH64(shard.data(), shard.size(), 0));
  char hex[17];
  for (int i = 0; i < 8; ++i) std::snprintf(hex + 2 * i, 3, "%02x", c.digest[i]);
  Write("shard.00000.mds", shard);
  Write("index.json", std::string(R"({"shards": [{"format": "mds", "raw_data": {"basename": )") +
                          R"("shard.00000.mds", "bytes": )" + std::to_string(shard.size()) +
                          R"(, "hashes": {"xxh64": ")" + hex + R"("}}, "zip_data": null}]})");
  auto shards = ListMdsShards(dir_->Join("index.json"));
  ASSERT_TRUE(shards.ok()) << shards.status().ToString();
  ASSERT_EQ(shards->size(), 1u);
  EXPECT_EQ((*shards)[0].path, dir_->Join("shard.00000.mds"));
  auto records = ReadShard((*shards)[0].path, (*shards)[0]);
  ASSERT_TRUE(records.ok()) << records.status().ToString();

  std::string flipped = shard;
  flipped.back() ^= 1;
  Write("shard.00000.mds", flipped);
  Status st = ReadShard((*shards)[0].path, (*shards)[0]).status();
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("xxh64 digest"), std::string::npos) << st.message();
}

TEST_F(MdsTest, CorruptShardsNameTheProblem) {
  std::string shard = Shard();
  std::string past = shard;
  uint32_t big = 100000;
  std::memcpy(&past[12], &big, 4);
  Status st = ReadShard(Write("a.mds", past)).status();
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("past the end of the shard"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("a.mds"), std::string::npos);
  EXPECT_EQ(ReadShard(Write("b.mds", shard.substr(0, 6))).status().code(), StatusCode::kCorruption);
  // A sample whose variable-size column claims more bytes than the sample has.
  std::string sizes = shard;
  uint32_t huge = 5000;
  std::memcpy(&sizes[235], &huge, 4);
  st = ReadShard(Write("c.mds", sizes)).status();
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("column 'text'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("record 0"), std::string::npos) << st.message();
}

TEST(MdsColumnsTest, DecodesScalarsAndNdarrayHeaders) {
  std::vector<MdsColumn> cols;
  for (auto [name, enc, size] : {std::tuple<const char*, const char*, int>{"a", "float16", 2},
                                 {"b", "ndarray", 0},
                                 {"c", "ndarray:int32:2", 8},
                                 {"d", "str_int", 0}}) {
    MdsColumn c;
    std::string json = std::string(R"({"column_names":[")") + name + R"("],"column_encodings":[")" +
                       enc + R"("],"column_sizes":[)" + (size ? std::to_string(size) : "null") +
                       "]}";
    std::string shard = MdsU32(0) + MdsU32(8 + json.size()) + json;
    auto layout = ParseMdsShardLayout(shard, "x");
    ASSERT_TRUE(layout.ok()) << layout.status().ToString();
    cols.push_back(layout->columns[0]);
  }
  std::string half("\x00\x3c", 2);  // 1.0
  std::string any = std::string("\x21\x04\x02", 3) + std::string("\x05\0\0\0\xfb\xff\xff\xff", 8);
  std::string fixed = std::string("\x01\0\0\0\x02\0\0\0", 8);
  std::string sample = MdsU32(any.size()) + MdsU32(2) + half + any + fixed + "42";
  std::vector<Field> fields;
  Status st = DecodeMdsSample(sample, cols, &fields);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(fields[0].floats, (std::vector<double>{1.0}));
  EXPECT_EQ(fields[1].ints, (std::vector<int64_t>{5, -5}));
  EXPECT_EQ(fields[2].ints, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(fields[3].ints, (std::vector<int64_t>{42}));
}

}  // namespace
}  // namespace stoker
