// S3 pieces that need no server: XML answers, credentials lookup, addressing. The requests
// themselves are tested against a real S3 server by tests/python/test_storage_s3.py.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "common/temp_dir.h"
#include "storage/aws_config.h"
#include "storage/s3_client.h"
#include "storage/s3_xml.h"

namespace stoker::storage {
namespace {

TEST(S3XmlTest, ParsesAListObjectsV2Page) {
  const char* xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult><Name>b</Name>"
      "<IsTruncated>true</IsTruncated><Contents><Key>a&amp;b.bin</Key><Size>12</Size>"
      "<ETag>&quot;abc&quot;</ETag></Contents><Contents><Key>c&#233;</Key><Size>0</Size>"
      "</Contents><NextContinuationToken>tok/+=</NextContinuationToken></ListBucketResult>";
  std::optional<S3ListPage> page = ParseListObjectsV2(xml);
  ASSERT_TRUE(page.has_value());
  ASSERT_EQ(page->entries.size(), 2u);
  EXPECT_EQ(page->entries[0].key, "a&b.bin");
  EXPECT_EQ(page->entries[0].size_bytes, 12u);
  EXPECT_EQ(page->entries[0].etag, "abc");
  EXPECT_EQ(page->entries[1].key, "c\xc3\xa9");
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_token, "tok/+=");
}

TEST(S3XmlTest, RefusesAPageWithABadSize) {
  EXPECT_FALSE(ParseListObjectsV2("<Contents><Key>a</Key><Size>x</Size></Contents>").has_value());
  EXPECT_FALSE(ParseListObjectsV2("<Contents><Size>1</Size></Contents>").has_value());
}

class AwsConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::move(TempDir::Create("aws-config-").value());
    for (const char* name :
         {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
          "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE"}) {
      unsetenv(name);
    }
    setenv("AWS_SHARED_CREDENTIALS_FILE", dir_->Join("credentials").c_str(), 1);
    setenv("AWS_CONFIG_FILE", dir_->Join("config").c_str(), 1);
  }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_->Join(name)) << text;
  }
  std::unique_ptr<TempDir> dir_;
};

TEST_F(AwsConfigTest, EnvironmentWins) {
  setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
  setenv("AWS_REGION", "eu-west-1", 1);
  setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9/", 1);
  Write("credentials", "[default]\naws_access_key_id = AKIDFILE\naws_secret_access_key = f\n");
  AwsConfig c = LoadAwsConfig().value();
  EXPECT_EQ(c.access_key_id, "AKIDENV");
  EXPECT_EQ(c.region, "eu-west-1");
  EXPECT_EQ(c.endpoint, "http://127.0.0.1:9");
  EXPECT_EQ(c.ToString().find("envsecret"), std::string::npos);
}

TEST_F(AwsConfigTest, ProfileFromBothFiles) {
  setenv("AWS_PROFILE", "train", 1);
  Write("credentials",
        "[default]\naws_access_key_id = D\naws_secret_access_key = d\n"
        "[train]\naws_access_key_id = AKIDTRAIN\naws_secret_access_key = s3cr3t\n"
        "aws_session_token = tok3n\n");
  Write("config", "[profile train]\nregion = ap-south-1\n");
  AwsConfig c = LoadAwsConfig().value();
  EXPECT_EQ(c.access_key_id, "AKIDTRAIN");
  EXPECT_EQ(c.secret_access_key, "s3cr3t");
  EXPECT_EQ(c.session_token, "tok3n");
  EXPECT_EQ(c.region, "ap-south-1");
  const std::string shown = c.ToString();
  EXPECT_EQ(shown.find("s3cr3t"), std::string::npos);
  EXPECT_EQ(shown.find("tok3n"), std::string::npos);
  EXPECT_NE(shown.find("profile train"), std::string::npos);
}

TEST_F(AwsConfigTest, NoCredentialsSaysWhereItLooked) {
  Status status = LoadAwsConfig().status();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("AWS_ACCESS_KEY_ID"), std::string::npos);
  EXPECT_NE(status.message().find(dir_->Join("credentials")), std::string::npos);
}

TEST(S3ClientTest, PathStyleForAnEndpointVirtualHostedForAws) {
  AwsConfig aws;
  aws.region = "us-west-2";
  EXPECT_EQ(S3Client(aws, S3Addressing::kAuto).ObjectUrl("bkt", "a b/c"),
            "https://bkt.s3.us-west-2.amazonaws.com/a%20b/c");
  EXPECT_EQ(S3Client(aws, S3Addressing::kAuto).ObjectUrl("my.bucket", "k"),
            "https://s3.us-west-2.amazonaws.com/my.bucket/k");
  aws.endpoint = "http://127.0.0.1:5000";
  EXPECT_EQ(S3Client(aws, S3Addressing::kAuto).ObjectUrl("bkt", "k"),
            "http://127.0.0.1:5000/bkt/k");
  EXPECT_EQ(S3Client(aws, S3Addressing::kVirtual).ObjectUrl("bkt", "k"),
            "http://bkt.127.0.0.1:5000/k");
}

}  // namespace
}  // namespace stoker::storage
