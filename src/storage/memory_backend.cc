#include "storage/memory_backend.h"

#include <map>
#include <mutex>
#include <optional>

namespace stoker::storage {
namespace {

class Objects {
 public:
  std::optional<std::string> Get(const std::string& uri) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = objects_.find(uri);
    if (it == objects_.end()) return std::nullopt;
    return it->second;
  }
  bool PutIfAbsent(const std::string& uri, std::string bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    return objects_.emplace(uri, std::move(bytes)).second;
  }
  void Erase(const std::string& uri) {
    std::lock_guard<std::mutex> lock(mu_);
    objects_.erase(uri);
  }
  void Put(const std::string& uri, std::string bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    objects_[uri] = std::move(bytes);
  }
  std::vector<ObjectInfo> List(const std::string& prefix) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<ObjectInfo> out;
    for (auto it = objects_.lower_bound(prefix);
         it != objects_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      out.push_back({it->first, it->second.size(), ""});
    }
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string> objects_;  // guarded by mu_
};

class MemoryWriter final : public Writer {
 public:
  MemoryWriter(std::shared_ptr<Objects> objects, std::string uri)
      : objects_(std::move(objects)), uri_(std::move(uri)) {}
  Status Append(std::string_view bytes) override {
    if (closed_) return FailedPrecondition(uri_ + ": append after close");
    buffer_.append(bytes);
    return Status::OK();
  }
  Status Close() override {
    if (closed_) return FailedPrecondition(uri_ + ": closed twice");
    closed_ = true;
    objects_->Put(uri_, std::move(buffer_));
    return Status::OK();
  }

 private:
  std::shared_ptr<Objects> objects_;
  std::string uri_;
  std::string buffer_;
  bool closed_ = false;
};

class MemoryBackend final : public Backend {
 public:
  Result<ObjectInfo> Stat(const std::string& uri) const override {
    std::optional<std::string> bytes = objects_->Get(uri);
    if (!bytes) return NotFound(uri + ": no such object");
    return ObjectInfo{uri, bytes->size(), ""};
  }
  Result<std::vector<ObjectInfo>> List(const std::string& prefix) const override {
    return objects_->List(prefix);
  }
  Result<std::unique_ptr<ByteSource>> OpenForRead(const std::string& uri) const override {
    std::optional<std::string> bytes = objects_->Get(uri);
    if (!bytes) return NotFound(uri + ": no such object");
    return MemorySource(uri, std::move(*bytes));
  }
  Result<std::unique_ptr<Writer>> OpenForWrite(const std::string& uri) const override {
    return std::unique_ptr<Writer>(new MemoryWriter(objects_, uri));
  }
  Status WriteIfAbsent(const std::string& uri, std::string_view bytes) const override {
    if (objects_->PutIfAbsent(uri, std::string(bytes))) return Status::OK();
    return AlreadyExists(uri + ": an object is already there");
  }
  Status Delete(const std::string& uri) const override {
    objects_->Erase(uri);
    return Status::OK();
  }

 private:
  std::shared_ptr<Objects> objects_ = std::make_shared<Objects>();
};

}  // namespace

std::unique_ptr<Backend> NewMemoryBackend() { return std::make_unique<MemoryBackend>(); }

}  // namespace stoker::storage
