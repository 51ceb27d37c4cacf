// Test doubles for the cache tests (header-only, test code only): a backend that records which
// objects were opened, one that corrupts the first N reads, and one that blocks in ReadAt until
// released, or until its thread's requests are cancelled (or its process is killed). Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/hash.h"
#include "storage/backend.h"
#include "storage/cancel.h"
#include "storage/memory_backend.h"

namespace stoker::cache::testing {

// Object bytes that differ per name: "<name>:" repeated up to `size` bytes.
inline std::string ObjectBytes(const std::string& name, size_t size) {
  std::string out;
  while (out.size() < size) out += name + ":" + std::to_string(out.size()) + ";";
  out.resize(size);
  return out;
}

inline std::string Xxh3Of(const std::string& bytes) {
  return Xxh3Hex(Xxh3(bytes.data(), bytes.size()));
}

// Counts OpenForRead and OpenForReadWithSize per uri and remembers their order. Optionally corrupts
// (flips a byte of) the first `corrupt_reads` ReadAt bodies, or blocks every ReadAt of `block_uri`
// until Unblock().
class TestBackend final : public storage::BackendWrapper {
 public:
  explicit TestBackend(std::unique_ptr<storage::Backend> inner)
      : BackendWrapper(std::move(inner)) {}

  Result<std::unique_ptr<ByteSource>> OpenForRead(const std::string& uri) const override {
    {
      std::lock_guard<std::mutex> l(mu_);
      ++opens_[uri];
      order_.push_back(uri);
    }
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> inner, inner().OpenForRead(uri));
    return std::unique_ptr<ByteSource>(new Source(this, std::move(inner)));
  }

  Result<std::unique_ptr<ByteSource>> OpenForReadWithSize(const std::string& uri,
                                                          uint64_t size_bytes) const override {
    {
      std::lock_guard<std::mutex> l(mu_);
      ++opens_[uri];
      order_.push_back(uri);
    }
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> inner,
                            inner().OpenForReadWithSize(uri, size_bytes));
    return std::unique_ptr<ByteSource>(new Source(this, std::move(inner)));
  }

  int opens(const std::string& uri) const {
    std::lock_guard<std::mutex> l(mu_);
    auto it = opens_.find(uri);
    return it == opens_.end() ? 0 : it->second;
  }
  std::vector<std::string> order() const {
    std::lock_guard<std::mutex> l(mu_);
    return order_;
  }
  void CorruptReads(int n) { corrupt_reads_ = n; }
  void Block(const std::string& uri) {
    std::lock_guard<std::mutex> l(mu_);
    block_uri_ = uri;
  }
  void Unblock() {
    std::lock_guard<std::mutex> l(mu_);
    block_uri_.clear();
    cv_.notify_all();
  }
  // A blocked ReadAt returns once its thread's storage requests are cancelled
  // (storage/cancel.h), and not before: it checks every millisecond, since nothing notifies it.
  void UnblockWhenCancelled() {
    std::lock_guard<std::mutex> l(mu_);
    unblock_when_cancelled_ = true;
    cv_.notify_all();
  }
  // Waits until a ReadAt of the blocked uri has started.
  void WaitBlocked() const {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return blocked_ > 0; });
  }

 private:
  class Source final : public ByteSourceWrapper {
   public:
    Source(const TestBackend* owner, std::unique_ptr<ByteSource> inner)
        : ByteSourceWrapper(std::move(inner)), owner_(owner) {}
    Result<size_t> ReadAt(uint64_t offset, size_t n, char* out) const override {
      {
        std::unique_lock<std::mutex> l(owner_->mu_);
        if (owner_->block_uri_ == uri()) {
          ++owner_->blocked_;
          owner_->cv_.notify_all();
          while (!owner_->cv_.wait_for(l, std::chrono::milliseconds(1), [&] {
            return owner_->block_uri_ != uri() ||
                   (owner_->unblock_when_cancelled_ && storage::CancelRequested());
          })) {
          }
        }
      }
      STOKER_ASSIGN_OR_RETURN(size_t got, inner().ReadAt(offset, n, out));
      if (got > 0 && owner_->corrupt_reads_.fetch_sub(1) > 0) out[0] ^= 0x5a;
      return got;
    }

   private:
    const TestBackend* owner_;
  };

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  mutable std::map<std::string, int> opens_;
  mutable std::vector<std::string> order_;
  mutable std::atomic<int> corrupt_reads_{0};
  mutable int blocked_ = 0;
  bool unblock_when_cancelled_ = false;
  std::string block_uri_;
};

}  // namespace stoker::cache::testing
