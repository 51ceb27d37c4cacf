#include "storage/cancel.h"

namespace stoker::storage {
namespace {

thread_local const CancelScope* current_scope = nullptr;

}  // namespace

CancelScope::CancelScope(const std::atomic<bool>* flag) : CancelScope(flag, current_scope) {}

CancelScope::CancelScope(const std::atomic<bool>* flag, const CancelScope* outer)
    : flag_(flag), outer_(outer), previous_(current_scope) {
  current_scope = this;
}

CancelScope::CancelScope(const std::atomic<bool>* flag, std::function<void()> on_check)
    : CancelScope(flag, current_scope) {
  on_check_ = std::move(on_check);
}

CancelScope::~CancelScope() { current_scope = previous_; }

bool CancelScope::cancelled() const {
  for (const CancelScope* s = this; s != nullptr; s = s->outer_) {
    if (s->on_check_) s->on_check_();
    if (s->flag_ != nullptr && s->flag_->load()) return true;
  }
  return false;
}

const CancelScope* CurrentCancelScope() { return current_scope; }

bool CancelRequested() { return current_scope != nullptr && current_scope->cancelled(); }

}  // namespace stoker::storage
