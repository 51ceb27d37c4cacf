// AWS credentials, region and endpoint, found the way the AWS CLI finds them: the environment
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION / AWS_DEFAULT_REGION,
// AWS_ENDPOINT_URL), then the profile AWS_PROFILE (default "default") in ~/.aws/credentials
// (AWS_SHARED_CREDENTIALS_FILE) and ~/.aws/config (AWS_CONFIG_FILE, "[profile NAME]" sections).
// The secret and the token never appear in ToString or in any error. Free functions; call them
// while no thread changes the environment.
#pragma once

#include <map>
#include <string>

#include "stoker/status.h"

namespace stoker::storage {

struct AwsConfig {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;
  std::string region = "us-east-1";
  std::string endpoint;  // "" for AWS itself; e.g. "http://127.0.0.1:9000"
  std::string profile;   // where the credentials came from, for messages
  std::string source;    // "environment", "/home/u/.aws/credentials", ...
  // "access key AKIA... (from environment), region us-east-1" — never the secret or the token.
  std::string ToString() const;
};

// kFailedPrecondition if no access key and secret are found (the message says where it looked).
// `endpoint_override`, if not empty, wins over AWS_ENDPOINT_URL.
Result<AwsConfig> LoadAwsConfig(const std::string& endpoint_override = "");

// The sections of an INI file ("[default]", "[profile x]") as name -> key -> value; keys are
// lower-cased, values trimmed. A missing file is an empty map.
std::map<std::string, std::map<std::string, std::string>> ParseIniFile(const std::string& path);

}  // namespace stoker::storage
