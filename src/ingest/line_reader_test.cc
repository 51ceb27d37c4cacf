#include "ingest/line_reader.h"

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "records/test_util.h"

namespace stoker {
namespace {

TEST(LineReaderTest, LineReaderNumbersLinesAndTracksOffsets) {
  // A line longer than the reader's 1 MiB buffer, and a last line without '\n'.
  std::string long_line(3 << 20, 'x');
  std::string data = "a\n\n" + long_line + "\nlast";
  auto dir = TempDir::Create("stoker-lines-");
  ASSERT_TRUE(dir.ok());
  std::string path = (*dir)->Join("l.jsonl.zst");
  testing_util::WriteBytes(path, testing_util::Zstd(data));
  auto stream = OpenByteStream(path);
  ASSERT_TRUE(stream.ok());
  LineReader reader(std::move(*stream));
  std::string line;
  std::vector<std::pair<std::string, uint64_t>> seen;
  while (true) {
    auto more = reader.Next(&line);
    ASSERT_TRUE(more.ok()) << more.status().ToString();
    if (!*more) break;
    seen.emplace_back(line.size() > 10 ? "long" : line, reader.line_offset_bytes());
    EXPECT_EQ(reader.line_number(), seen.size());
  }
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0], (std::pair<std::string, uint64_t>{"a", 0}));
  EXPECT_EQ(seen[1], (std::pair<std::string, uint64_t>{"", 2}));
  EXPECT_EQ(seen[2], (std::pair<std::string, uint64_t>{"long", 3}));
  EXPECT_EQ(seen[3], (std::pair<std::string, uint64_t>{"last", 4 + long_line.size()}));
}

}  // namespace
}  // namespace stoker
