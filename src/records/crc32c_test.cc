#include "records/crc32c.h"

#include <gtest/gtest.h>

#include <string>

namespace stoker {
namespace {

TEST(Crc32cTest, KnownAnswersAndMasking) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xe3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
  std::string zeros(32, '\0');
  EXPECT_EQ(Crc32c(zeros.data(), zeros.size()), 0x8a9136aau);  // RFC 3720 B.4
  std::string a = "hello, ", b = "world and more bytes than eight";
  EXPECT_EQ(Crc32cExtend(Crc32c(a.data(), a.size()), b.data(), b.size()),
            Crc32c((a + b).data(), a.size() + b.size()));
  for (uint32_t c : {0u, 1u, 0xdeadbeefu, 0xffffffffu}) EXPECT_EQ(UnmaskCrc32c(MaskCrc32c(c)), c);
}

}  // namespace
}  // namespace stoker
