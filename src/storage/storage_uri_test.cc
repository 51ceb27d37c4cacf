#include "storage/storage_uri.h"

#include <gtest/gtest.h>

#include "storage/http_client.h"
#include "storage/open_backend.h"

namespace stoker::storage {
namespace {

TEST(StorageUriTest, ParsesEveryServedScheme) {
  EXPECT_EQ(ParseStorageUri("data/x").value().path, "data/x");
  EXPECT_EQ(ParseStorageUri("file:///abs/x").value().path, "/abs/x");
  StorageUri s3 = ParseStorageUri("s3://bucket/a/b.bin").value();
  EXPECT_EQ(s3.kind, UriKind::kS3);
  EXPECT_EQ(s3.bucket, "bucket");
  EXPECT_EQ(s3.key, "a/b.bin");
  EXPECT_EQ(ParseStorageUri("s3://bucket").value().key, "");
  EXPECT_EQ(ParseStorageUri("https://host/p?q=1").value().url, "https://host/p?q=1");
}

TEST(StorageUriTest, UnservedSchemeNamesTheServedOnes) {
  Status status = ParseStorageUri("gs://b/k").status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("does not serve gs://"), std::string::npos);
  EXPECT_NE(status.message().find("s3://bucket/key"), std::string::npos);
  EXPECT_EQ(OpenBackendForUri("hdfs://nn/x").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseStorageUri("s3:///key").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseStorageUri("http:///x").status().code(), StatusCode::kInvalidArgument);
}

TEST(StorageUriTest, UriEncodeKeepsUnreservedAndOptionallySlash) {
  EXPECT_EQ(UriEncode("a b/c~d_e-f.g", true), "a%20b/c~d_e-f.g");
  EXPECT_EQ(UriEncode("a/b+c=", false), "a%2Fb%2Bc%3D");
  EXPECT_EQ(UriEncode("\xc3\xa9", false), "%C3%A9");
}

TEST(StorageUriTest, UserinfoNeverReachesAMessage) {
  EXPECT_EQ(WithoutUserinfo("https://me:pw@host/a@b"), "https://<redacted>@host/a@b");
  EXPECT_EQ(WithoutUserinfo("https://host/a@b"), "https://host/a@b");
  EXPECT_EQ(WithoutUserinfo("http://host"), "http://host");
}

}  // namespace
}  // namespace stoker::storage
