#include "storage/aws_config.h"

#include <cctype>
#include <cstdlib>
#include <fstream>

namespace stoker::storage {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

std::string Trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

std::string HomeFile(const char* env_override, const char* relative) {
  std::string path = Env(env_override);
  if (!path.empty()) return path;
  const std::string home = Env("HOME");
  return home.empty() ? "" : home + "/" + relative;
}

}  // namespace

std::map<std::string, std::map<std::string, std::string>> ParseIniFile(const std::string& path) {
  std::map<std::string, std::map<std::string, std::string>> out;
  std::ifstream in(path);
  std::string line, section;
  while (std::getline(in, line)) {
    line = Trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      section = Trim(line.substr(1, line.size() - 2));
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = Trim(line.substr(0, eq));
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out[section][key] = Trim(line.substr(eq + 1));
  }
  return out;
}

Result<AwsConfig> LoadAwsConfig(const std::string& endpoint_override) {
  AwsConfig config;
  config.profile = Env("AWS_PROFILE");
  if (config.profile.empty()) config.profile = "default";
  const std::string credentials_path = HomeFile("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
  const std::string config_path = HomeFile("AWS_CONFIG_FILE", ".aws/config");
  const auto credentials_file = ParseIniFile(credentials_path);
  const auto config_file = ParseIniFile(config_path);
  // ~/.aws/config names a profile "[profile x]", except "[default]".
  std::map<std::string, std::string> profile_config;
  for (const std::string& name : {config.profile, "profile " + config.profile}) {
    auto it = config_file.find(name);
    if (it != config_file.end()) profile_config.insert(it->second.begin(), it->second.end());
  }
  std::map<std::string, std::string> profile_credentials = profile_config;
  if (auto it = credentials_file.find(config.profile); it != credentials_file.end()) {
    for (const auto& [k, v] : it->second) profile_credentials[k] = v;
  }

  if (!Env("AWS_ACCESS_KEY_ID").empty() && !Env("AWS_SECRET_ACCESS_KEY").empty()) {
    config.access_key_id = Env("AWS_ACCESS_KEY_ID");
    config.secret_access_key = Env("AWS_SECRET_ACCESS_KEY");
    config.session_token = Env("AWS_SESSION_TOKEN");
    config.source = "environment";
  } else if (profile_credentials.count("aws_access_key_id") &&
             profile_credentials.count("aws_secret_access_key")) {
    config.access_key_id = profile_credentials["aws_access_key_id"];
    config.secret_access_key = profile_credentials["aws_secret_access_key"];
    config.session_token = profile_credentials["aws_session_token"];
    config.source = "profile " + config.profile;
  } else {
    return FailedPrecondition(
        "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or add them to "
        "profile '" +
        config.profile + "' in " + credentials_path + " (or " + config_path + ")");
  }
  if (!Env("AWS_REGION").empty()) {
    config.region = Env("AWS_REGION");
  } else if (!Env("AWS_DEFAULT_REGION").empty()) {
    config.region = Env("AWS_DEFAULT_REGION");
  } else if (profile_config.count("region")) {
    config.region = profile_config["region"];
  }
  config.endpoint = endpoint_override;
  if (config.endpoint.empty()) config.endpoint = Env("AWS_ENDPOINT_URL_S3");
  if (config.endpoint.empty()) config.endpoint = Env("AWS_ENDPOINT_URL");
  if (config.endpoint.empty() && profile_config.count("endpoint_url")) {
    config.endpoint = profile_config["endpoint_url"];
  }
  while (!config.endpoint.empty() && config.endpoint.back() == '/') config.endpoint.pop_back();
  return config;
}

std::string AwsConfig::ToString() const {
  std::string out = "access key " + access_key_id + " (from " + source + "), region " + region;
  if (!session_token.empty()) out += ", with a session token";
  if (!endpoint.empty()) out += ", endpoint " + endpoint;
  return out;
}

}  // namespace stoker::storage
