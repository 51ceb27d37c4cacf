#include "records/hf_dataset.h"

#include <map>
#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "common/uri.h"

namespace stoker {

bool IsHfDatasetDir(const std::string& dir, const RecordStore& store) {
  if (!store.remote() && !IsDirectory(dir)) return false;
  return store.Exists(JoinPath(dir, "state.json")) ||
         store.Exists(JoinPath(dir, "dataset_dict.json"));
}

Result<std::vector<RecordShard>> ListHfDatasetShards(const std::string& dir,
                                                     const RecordStore& store) {
  std::string dict = JoinPath(dir, "dataset_dict.json");
  std::string state = JoinPath(dir, "state.json");
  Result<std::string> state_text = store.ReadAll(state);
  if (!state_text.ok() && state_text.status().code() == StatusCode::kNotFound &&
      store.Exists(dict)) {
    STOKER_ASSIGN_OR_RETURN(std::string text, store.ReadAll(dict));
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
  STOKER_ASSIGN_OR_RETURN(std::string text, std::move(state_text));
  // Remote on s3://: the sizes of every file from one listing, not a HEAD each.
  std::map<std::string, uint64_t> listed;
  if (store.remote() && UriScheme(dir) == "s3") {
    STOKER_ASSIGN_OR_RETURN(std::vector<storage::ObjectInfo> objects, store.ListDir(dir));
    for (const storage::ObjectInfo& o : objects) listed[o.uri] = o.size_bytes;
  }
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
      s.store = store;
      if (auto it = listed.find(s.path); it != listed.end()) {
        s.size_bytes = it->second;
      } else {
        STOKER_ASSIGN_OR_RETURN(s.size_bytes, store.Size(s.path));
      }
      s.object_bytes = s.size_bytes;
      shards.push_back(std::move(s));
      ++i;
    }
  } catch (const nlohmann::json::exception& e) {
    return Corruption(state +
                      ": malformed state.json (expected _data_files[].filename): " + e.what());
  }
  return shards;
}

}  // namespace stoker
