// Cancellation of the storage requests a thread makes. A CancelScope installs, for the thread
// that creates it, a flag whose setting (by any thread) stops that thread's requests: an HTTP
// transfer in flight is aborted inside libcurl (its progress callback looks at the flags about
// once a second even when no byte arrives; http_client.cc), a request not yet sent is not sent,
// and the retry loop neither sleeps on nor repeats a cancelled request (retry_backend.h). All of
// them end with kCancelled. Scopes nest: a thread's requests stop when any of its scopes' flags
// is set. A thread that hands its work to helpers it joins passes them its scopes (`outer`), as
// cache/object_fetch.cc does for the parts of one object.
// Not thread-safe as an object: a scope belongs to the thread that created it (and to helpers it
// is passed to, which must end before it does); the flags may be set from any thread.
#pragma once

#include <atomic>
#include <functional>

namespace stoker::storage {

class CancelScope {
 public:
  // Adds `flag` (nullptr: nothing) to the calling thread's scopes, on top of `outer` — by
  // default the thread's current scopes, or those of the thread that started this helper.
  explicit CancelScope(const std::atomic<bool>* flag);
  CancelScope(const std::atomic<bool>* flag, const CancelScope* outer);
  // For tests: like CancelScope(flag), and `on_check` runs each time this scope's flag is looked
  // at (on the thread that looks), so that a test learns that the thread has reached a wait
  // that checks for cancellation instead of sleeping until it most likely has
  // (storage/cancel_testing.h).
  CancelScope(const std::atomic<bool>* flag, std::function<void()> on_check);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

  // Whether this scope's flag or an outer one's is set.
  bool cancelled() const;

 private:
  const std::atomic<bool>* flag_;
  const CancelScope* outer_;
  const CancelScope* previous_;  // the thread's innermost scope before this one
  std::function<void()> on_check_;
};

// The calling thread's innermost scope, or nullptr (to pass to helpers it starts and joins).
const CancelScope* CurrentCancelScope();
// Whether any scope of the calling thread has been cancelled.
bool CancelRequested();

}  // namespace stoker::storage
