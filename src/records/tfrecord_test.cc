#include "records/tfrecord.h"

#include <gtest/gtest.h>

#include "records/test_util.h"
#include "records/tf_example.h"

namespace stoker {
namespace {

std::string Unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size();) {
    if (hex[i] == ' ' || hex[i] == '|') {
      ++i;
      continue;
    }
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
    i += 2;
  }
  return out;
}

// docs/formats-reference.md §4.2: ids = int64[1, -1], w = float[0.5], t = bytes["ab"].
const char* kExampleHex =
    "0a 34 0a 16 0a 03 69 64 73 12 0f 1a 0d 0a 0b 01 ff ff ff ff ff ff ff ff ff 01"
    " 0a 0d 0a 01 77 12 08 12 06 0a 04 00 00 00 3f 0a 0b 0a 01 74 12 06 0a 04 0a 02 61 62";

Result<std::vector<Record>> ReadAll(const std::string& name, const std::string& bytes) {
  auto source = OpenTfRecordShard(MemorySource(name, bytes));
  return testing_util::ReadAllRecords(*source);
}

TEST(TfRecordTest, FramingMatchesTheTestVector) {
  EXPECT_EQ(FrameTfRecord("hello"),
            Unhex("05 00 00 00 00 00 00 00 ea b2 04 3e 68 65 6c 6c 6f bb 1f 1c 19"));
  std::string framed = FrameTfRecord(Unhex(kExampleHex));
  EXPECT_EQ(framed.size(), 70u);
  EXPECT_EQ(framed.substr(0, 12), Unhex("36 00 00 00 00 00 00 00 4f 57 8c ef"));
}

TEST(TfRecordTest, DecodesExampleFeatures) {
  std::vector<Field> fields;
  ASSERT_TRUE(DecodeTfExample(Unhex(kExampleHex), &fields).ok());
  ASSERT_EQ(fields.size(), 3u);
  EXPECT_EQ(fields[0].name, "ids");
  EXPECT_EQ(fields[0].type, FieldType::kInt);
  EXPECT_EQ(fields[0].ints, (std::vector<int64_t>{1, -1}));
  EXPECT_EQ(fields[1].floats, (std::vector<double>{0.5}));
  EXPECT_EQ(fields[2].type, FieldType::kBytes);
  EXPECT_EQ(fields[2].bytes, "ab");
  EXPECT_EQ(EncodeTfExample(fields), Unhex(kExampleHex));
}

TEST(TfRecordTest, UnpackedListsAndEmptyBytes) {
  // int64_list unpacked (0x08 varint) and float_list unpacked (0x0d + 4 bytes); empty bytes_list.
  std::string ints = Unhex("1a 04 08 05 08 07");       // Feature{int64_list{5, 7}}
  std::string floats = Unhex("12 05 0d 00 00 80 3f");  // Feature{float_list{1.0}}
  std::string empty = Unhex("0a 00");                  // Feature{bytes_list{}}
  auto entry = [](std::string key, std::string feature) {
    return std::string(1, 0x0a) + static_cast<char>(key.size() + feature.size() + 4) + '\x0a' +
           static_cast<char>(key.size()) + key + '\x12' + static_cast<char>(feature.size()) +
           feature;
  };
  std::string features = entry("i", ints) + entry("f", floats) + entry("e", empty);
  std::string example = std::string(1, 0x0a) + static_cast<char>(features.size()) + features;
  std::vector<Field> fields;
  ASSERT_TRUE(DecodeTfExample(example, &fields).ok());
  ASSERT_EQ(fields.size(), 3u);
  EXPECT_EQ(fields[0].ints, (std::vector<int64_t>{5, 7}));
  EXPECT_EQ(fields[1].floats, (std::vector<double>{1.0}));
  EXPECT_EQ(fields[2].byte_values, 0u);
}

TEST(TfRecordTest, ReadsPlainGzipAndZlibFiles) {
  std::string data = FrameTfRecord(Unhex(kExampleHex)) + FrameTfRecord(EncodeTfExample({}));
  for (auto [name, bytes] : {std::pair<std::string, std::string>{"a.tfrecord", data},
                             {"b.tfrecord", testing_util::Gzip(data)},
                             {"c.tfrecord", testing_util::Zlib(data)},
                             {"d.tfrecord.gz", testing_util::Gzip(data)}}) {
    auto records = ReadAll(name, bytes);
    ASSERT_TRUE(records.ok()) << name << ": " << records.status().ToString();
    ASSERT_EQ(records->size(), 2u) << name;
    EXPECT_EQ((*records)[0].fields.size(), 3u);
    EXPECT_EQ((*records)[1].key, "1");
    EXPECT_EQ((*records)[1].offset_bytes, 70u);
  }
}

TEST(TfRecordTest, CorruptCrcsAndTruncationNameFileAndOffset) {
  std::string data = FrameTfRecord(EncodeTfExample({})) + FrameTfRecord(Unhex(kExampleHex));
  size_t second = FrameTfRecord(EncodeTfExample({})).size();
  std::string bad_len = data;
  bad_len[second + 8] ^= 1;
  Status st = ReadAll("x.tfrecord", bad_len).status();
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("x.tfrecord: TFRecord length CRC mismatch at byte offset " +
                              std::to_string(second)),
            std::string::npos)
      << st.message();
  std::string bad_data = data;
  bad_data[second + 13] ^= 1;
  st = ReadAll("x.tfrecord", bad_data).status();
  EXPECT_NE(st.message().find("data CRC mismatch"), std::string::npos) << st.message();
  st = ReadAll("x.tfrecord", data.substr(0, data.size() - 2)).status();
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("truncated"), std::string::npos) << st.message();
  // A record whose data is not an Example.
  st = ReadAll("x.tfrecord", FrameTfRecord("\x0a\x7f")).status();
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("record 0"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace stoker
