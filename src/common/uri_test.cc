#include "common/uri.h"

#include <gtest/gtest.h>

namespace stoker {
namespace {

TEST(UriTest, SchemeOfUrisOnly) {
  EXPECT_EQ(UriScheme("s3://bucket/prefix"), "s3");
  EXPECT_EQ(UriScheme("HTTPS://host/x"), "https");
  EXPECT_EQ(UriScheme("gs+x.y-z://b"), "gs+x.y-z");
  EXPECT_EQ(UriScheme("data/sample"), "");
  EXPECT_EQ(UriScheme("/abs/s3://x"), "");  // a path that merely contains "://"
  EXPECT_EQ(UriScheme("0.3:data/web"), "");  // a mixture weight
  EXPECT_EQ(UriScheme("3s://x"), "");
  EXPECT_EQ(UriScheme("://x"), "");
}

TEST(UriTest, PlainPathsAndFileUrisAreLocal) {
  EXPECT_EQ(*LocalPathFromUri("out/ds"), "out/ds");
  EXPECT_EQ(*LocalPathFromUri("file:///data/ds"), "/data/ds");
  EXPECT_EQ(*LocalPathFromUri("file://localhost/data/ds"), "/data/ds");
  EXPECT_FALSE(LocalPathFromUri("file://otherhost/data").ok());
  EXPECT_FALSE(LocalPathFromUri("file://").ok());
}

TEST(UriTest, OtherSchemesNameWhatIsServed) {
  for (const char* uri : {"s3://b/p", "http://h/x", "gs://b/o", "hf://datasets/x"}) {
    Result<std::string> r = LocalPathFromUri(uri);
    ASSERT_FALSE(r.ok()) << uri;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(uri), std::string::npos);
    EXPECT_NE(r.status().message().find("local paths and file:// URIs"), std::string::npos)
        << r.status().message();
  }
}

TEST(JoinUriTest, ResolvesDotSegmentsInsideTheBucket) {
  EXPECT_EQ(JoinUri("s3://b/a/ds", "shard_0"), "s3://b/a/ds/shard_0");
  EXPECT_EQ(JoinUri("s3://b/a/ds/", "./shard_0"), "s3://b/a/ds/shard_0");
  EXPECT_EQ(JoinUri("s3://b/a/ds", "../p/shard_0"), "s3://b/a/p/shard_0");
  EXPECT_EQ(JoinUri("s3://b/ds", "../x"), "s3://b/x");
  EXPECT_EQ(JoinUri("s3://b/", "../x"), "s3://b/../x");
  EXPECT_EQ(JoinUri("http://h:80/d/e", "../../f"), "http://h:80/f");
  EXPECT_EQ(JoinUri("/data/ds", "../p/s"), "/data/p/s");
  EXPECT_EQ(JoinUri("/ds", "../p"), "/p");
  EXPECT_EQ(JoinUri("data/ds", "../p"), "data/p");
}

}  // namespace
}  // namespace stoker
