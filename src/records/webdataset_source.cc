#include "records/webdataset_source.h"

#include <optional>

#include "records/tar_reader.h"

namespace stoker {
namespace {

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

class WebDatasetShard final : public RecordSource {
 public:
  WebDatasetShard(std::unique_ptr<ByteStream> stream, std::string uri)
      : tar_(std::move(stream), uri), uri_(std::move(uri)) {}

  // 1. Take members until one has a different key (kept for the next call) or the tar ends;
  // 2. add each one's data under its extension; 3. return the sample.
  Result<std::optional<Record>> Next() override {
    std::optional<Record> sample;
    while (true) {
      std::optional<TarMember> member;
      if (pending_) {
        member = std::move(pending_);
        pending_.reset();
      } else {
        STOKER_ASSIGN_OR_RETURN(member, tar_.Next());
      }
      if (!member) return sample;
      if (IsWebDatasetMetaName(member->name)) continue;
      std::string_view key, ext;
      if (!SplitWebDatasetName(member->name, &key, &ext)) continue;
      if (sample && sample->key != key) {
        pending_ = std::move(member);
        return sample;
      }
      if (!sample) {
        sample = Record{.key = std::string(key),
                        .source = uri_,
                        .index = next_index_++,
                        .offset_bytes = member->header_offset};
      }
      std::string field = AsciiLower(ext);
      if (sample->Find(field) != nullptr) {
        return Corruption(uri_ + ": duplicate file name '" + member->name + "' in sample '" +
                          sample->key + "' at byte offset " +
                          std::to_string(member->header_offset));
      }
      Field f;
      f.name = std::move(field);
      f.type = FieldType::kBytes;
      f.bytes = std::move(member->data);
      sample->fields.push_back(std::move(f));
    }
  }

 private:
  TarReader tar_;
  std::string uri_;
  std::optional<TarMember> pending_;
  uint64_t next_index_ = 0;
};

}  // namespace

bool SplitWebDatasetName(std::string_view name, std::string_view* key, std::string_view* ext) {
  size_t last_slash = name.rfind('/');
  size_t comp = last_slash == std::string_view::npos ? 0 : last_slash + 1;
  size_t dot = name.find('.', comp);
  if (dot == std::string_view::npos) return false;
  if (dot == comp) {
    // The last component starts with a dot: the regex backtracks to the previous '/', which
    // works only if the directory component before it has no dot.
    if (comp == 0) return false;
    size_t prev_slash = comp >= 2 ? name.rfind('/', comp - 2) : std::string_view::npos;
    size_t prev = prev_slash == std::string_view::npos ? 0 : prev_slash + 1;
    if (name.substr(prev, comp - prev).find('.') != std::string_view::npos) return false;
  }
  *key = name.substr(0, dot);
  *ext = name.substr(dot + 1);
  return true;
}

bool IsWebDatasetMetaName(std::string_view name) {
  size_t slash = name.find('/');
  if (slash == std::string_view::npos) return name.starts_with("__") && name.ends_with("__");
  std::string_view first = name.substr(0, slash);
  return first.size() >= 4 && first.starts_with("__") && first.ends_with("__");
}

std::unique_ptr<RecordSource> OpenWebDatasetShard(std::shared_ptr<const ByteSource> source,
                                                  Compression compression) {
  std::string uri = source->uri();
  return std::make_unique<WebDatasetShard>(OpenSourceStream(std::move(source), compression),
                                           std::move(uri));
}

}  // namespace stoker
