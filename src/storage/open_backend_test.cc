#include "storage/open_backend.h"

#include <gtest/gtest.h>

#include "storage/http_client.h"

namespace stoker::storage {
namespace {

TEST(OpenBackendTest, UnservedSchemeNamesTheServedOnes) {
  Status status = OpenBackendForUri("hdfs://nn/x").status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("does not serve hdfs://"), std::string::npos);
  EXPECT_NE(status.message().find("s3://bucket/key"), std::string::npos);
  EXPECT_EQ(OpenBackendForUri("s3:///key").status().code(), StatusCode::kInvalidArgument);
}

TEST(OpenBackendTest, UserinfoNeverReachesAMessage) {
  EXPECT_EQ(WithoutUserinfo("https://me:pw@host/a@b"), "https://<redacted>@host/a@b");
  EXPECT_EQ(WithoutUserinfo("https://host/a@b"), "https://host/a@b");
  EXPECT_EQ(WithoutUserinfo("http://host"), "http://host");
}

}  // namespace
}  // namespace stoker::storage
