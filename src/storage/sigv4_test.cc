#include "storage/sigv4.h"

#include <gtest/gtest.h>

namespace stoker::storage {
namespace {

constexpr char kEmptySha256[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

// Source: AWS documentation, Amazon S3 API reference, "Signature Calculations for the
// Authorization Header: Transferring Payload in a Single Chunk (AWS Signature Version 4)",
// example "GET Object" (the first 10 bytes of test.txt in examplebucket). Its key pair
// AKIAIOSFODNN7EXAMPLE / wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY is AWS's published example.
TEST(SigV4Test, AwsDocumentationGetObjectExample) {
  SigningRequest request;
  request.method = "GET";
  request.canonical_uri = "/test.txt";
  request.headers = {{"Host", "examplebucket.s3.amazonaws.com"},
                     {"Range", "bytes=0-9"},
                     {"x-amz-content-sha256", kEmptySha256},
                     {"x-amz-date", "20130524T000000Z"}};
  request.payload_sha256 = kEmptySha256;
  const SigningKeyParts key{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                            "us-east-1", "s3"};
  EXPECT_EQ(
      CanonicalRequest(request),
      "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
      "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
      "x-amz-date:20130524T000000Z\n\nhost;range;x-amz-content-sha256;x-amz-date\n"
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(StringToSign(request, key, "20130524T000000Z"),
            "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  EXPECT_EQ(AuthorizationHeader(request, key, "20130524T000000Z"),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

// Source: the AWS Signature Version 4 test suite (docs.aws.amazon.com, "signature-v4-test-suite"),
// case get-vanilla-query-order-key-case: query parameters out of order are sorted. Test-suite
// credentials AKIDEXAMPLE / wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, service "service".
TEST(SigV4Test, TestSuiteGetVanillaQueryOrderKeyCase) {
  SigningRequest request;
  request.method = "GET";
  request.canonical_uri = "/";
  request.query = {{"Param2", "value2"}, {"Param1", "value1"}};
  request.headers = {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", "20150830T123600Z"}};
  request.payload_sha256 = kEmptySha256;
  const SigningKeyParts key{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "us-east-1",
                            "service"};
  // The suite writes ", " between the parts; S3 accepts both, stoker writes ",".
  EXPECT_EQ(AuthorizationHeader(request, key, "20150830T123600Z"),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request,"
            "SignedHeaders=host;x-amz-date,"
            "Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
}

TEST(SigV4Test, QueryIsEncodedAndSorted) {
  EXPECT_EQ(CanonicalQueryString({{"prefix", "a b/c"}, {"list-type", "2"}, {"uploads", ""}}),
            "list-type=2&prefix=a%20b%2Fc&uploads=");
}

TEST(SigV4Test, Sha256OfEmptyString) { EXPECT_EQ(Sha256Hex(""), kEmptySha256); }

TEST(SigV4Test, AmzDateHasTheDocumentedShape) {
  const std::string date = AmzDateNow();
  ASSERT_EQ(date.size(), 16u);
  EXPECT_EQ(date[8], 'T');
  EXPECT_EQ(date[15], 'Z');
}

}  // namespace
}  // namespace stoker::storage
