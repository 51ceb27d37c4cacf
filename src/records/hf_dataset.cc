#include "records/hf_dataset.h"

#include <nlohmann/json.hpp>

#include "common/file_util.h"

namespace stoker {

bool IsHfDatasetDir(const std::string& dir) {
  return IsDirectory(dir) && (PathExists(JoinPath(dir, "state.json")) ||
                              PathExists(JoinPath(dir, "dataset_dict.json")));
}

Result<std::vector<RecordShard>> ListHfDatasetShards(const std::string& dir) {
  std::string dict = JoinPath(dir, "dataset_dict.json");
  std::string state = JoinPath(dir, "state.json");
  if (!PathExists(state) && PathExists(dict)) {
    STOKER_ASSIGN_OR_RETURN(std::string text, ReadFileToString(dict));
    std::string splits;
    try {
      nlohmann::json j = nlohmann::json::parse(text);
      for (const auto& s : j.at("splits")) {
        splits += (splits.empty() ? "" : ", ") + s.get<std::string>();
      }
    } catch (const nlohmann::json::exception& e) {
      return Corruption(dict + ": malformed dataset_dict.json: " + e.what());
    }
    return InvalidArgument(dir + " is a DatasetDict with splits " + splits +
                           ": pass one split's directory (e.g. " + JoinPath(dir, "train") + ")");
  }
  STOKER_ASSIGN_OR_RETURN(std::string text, ReadFileToString(state));
  std::vector<RecordShard> shards;
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    const nlohmann::json& files = j.at("_data_files");
    size_t i = 0;
    for (const nlohmann::json& f : files) {
      std::string name = f.at("filename").get<std::string>();
      if (name.empty() || name.starts_with("/") || name.find("..") != std::string::npos) {
        return Corruption(state + ": _data_files[" + std::to_string(i) + "] '" + name +
                          "' is not a file name inside the directory");
      }
      RecordShard s;
      s.path = JoinPath(dir, name);
      s.format = RecordFormat::kArrow;
      STOKER_ASSIGN_OR_RETURN(s.size_bytes, FileSizeBytes(s.path));
      shards.push_back(std::move(s));
      ++i;
    }
  } catch (const nlohmann::json::exception& e) {
    return Corruption(state + ": malformed state.json (expected _data_files[].filename): " +
                      e.what());
  }
  return shards;
}

}  // namespace stoker
