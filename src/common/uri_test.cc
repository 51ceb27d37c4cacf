#include "common/uri.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace stoker {
namespace {

TEST(UriTest, SchemeOfUrisOnly) {
  EXPECT_EQ(UriScheme("s3://bucket/prefix"), "s3");
  EXPECT_EQ(UriScheme("HTTPS://host/x"), "https");
  EXPECT_EQ(UriScheme("gs+x.y-z://b"), "gs+x.y-z");
  EXPECT_EQ(UriScheme("data/sample"), "");
  EXPECT_EQ(UriScheme("/abs/s3://x"), "");   // a path that merely contains "://"
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

TEST(UriTest, RemoteUrisAreServedButNotWhereALocalFileIsTaken) {
  for (const char* uri : {"s3://b/p", "http://h/x", "HTTPS://h/x"}) {
    EXPECT_TRUE(IsRemoteUri(uri)) << uri;
    Result<std::string> r = LocalPathFromUri(uri);
    ASSERT_FALSE(r.ok()) << uri;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(uri), std::string::npos);
    EXPECT_NE(r.status().message().find("takes local paths and file:// URIs"), std::string::npos)
        << r.status().message();
  }
  for (const char* local : {"data/x", "/abs/x", "file:///abs/x", "gs://b/o"}) {
    EXPECT_FALSE(IsRemoteUri(local)) << local;
  }
}

// One list of served schemes: every message about an unserved one names them all.
TEST(UriTest, UnservedSchemesNameEveryServedOne) {
  for (const char* uri : {"gs://b/o", "hf://datasets/x", "hdfs://nn/x"}) {
    for (const Status& st : {LocalPathFromUri(uri).status(), ParseUri(uri).status()}) {
      EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
      EXPECT_NE(st.message().find(std::string(uri) + ": stoker does not serve " + UriScheme(uri) +
                                  ":// URIs; it serves local paths, file://, "
                                  "s3://bucket/key, http:// and https://"),
                std::string::npos)
          << st.message();
    }
  }
  for (std::string_view scheme : kServedSchemes) {
    EXPECT_NE(kServedSchemesText.find(std::string(scheme) + "://"), std::string::npos) << scheme;
  }
}

TEST(UriTest, ParsesEveryServedScheme) {
  EXPECT_EQ(ParseUri("data/x").value().path, "data/x");
  EXPECT_EQ(ParseUri("file:///abs/x").value().path, "/abs/x");
  EXPECT_EQ(ParseUri("file:///abs/x").value().kind, UriKind::kFile);
  ParsedUri s3 = ParseUri("s3://bucket/a/b.bin").value();
  EXPECT_EQ(s3.kind, UriKind::kS3);
  EXPECT_EQ(s3.bucket, "bucket");
  EXPECT_EQ(s3.key, "a/b.bin");
  EXPECT_EQ(ParseUri("s3://bucket").value().key, "");
  ParsedUri http = ParseUri("https://host/p?q=1").value();
  EXPECT_EQ(http.kind, UriKind::kHttp);
  EXPECT_EQ(http.url, "https://host/p?q=1");
  for (const char* bad : {"", "s3:///key", "http:///x", "https://", "file://host/x"}) {
    EXPECT_EQ(ParseUri(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(UriTest, UriEncodeKeepsUnreservedAndOptionallySlash) {
  EXPECT_EQ(UriEncode("a b/c~d_e-f.g", true), "a%20b/c~d_e-f.g");
  EXPECT_EQ(UriEncode("a/b+c=", false), "a%2Fb%2Bc%3D");
  EXPECT_EQ(UriEncode("\xc3\xa9", false), "%C3%A9");
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

TEST(UriTest, SplitUriFindsTheAuthority) {
  auto parts = [](std::string_view u) {
    const UriParts p = SplitUri(u);
    return std::vector<std::string>{std::string(p.scheme), std::string(p.authority),
                                    std::string(p.path)};
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(parts("https://h.example:8443/a/b?x=1"), (V{"https", "h.example:8443", "/a/b?x=1"}));
  EXPECT_EQ(parts("s3://bucket"), (V{"s3", "bucket", ""}));
  EXPECT_EQ(parts("s3://bucket/"), (V{"s3", "bucket", "/"}));
  EXPECT_EQ(parts("http:///x"), (V{"http", "", "/x"}));
  EXPECT_EQ(parts("localhost:9000/base"), (V{"", "", "localhost:9000/base"}));
}

}  // namespace
}  // namespace stoker