#include "stoker/status.h"

#include <cstring>
#include <iterator>

namespace stoker {

std::string_view StatusCodeName(StatusCode code) {
  // In StatusCode's order, kOk to kInternal.
  static constexpr std::string_view kNames[] = {"ok",
                                                "invalid_argument",
                                                "not_found",
                                                "already_exists",
                                                "corruption",
                                                "io_error",
                                                "unavailable",
                                                "cancelled",
                                                "out_of_range",
                                                "failed_precondition",
                                                "unimplemented",
                                                "internal"};
  static_assert(std::size(kNames) == static_cast<size_t>(StatusCode::kInternal) + 1);
  const auto i = static_cast<size_t>(code);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

Status::Status(StatusCode code, std::string message) {
  if (code != StatusCode::kOk) {
    state_ = std::make_shared<const State>(State{code, std::move(message)});
  }
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return ok() ? kEmpty : state_->message;
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(StatusCodeName(code())) + ": " + state_->message;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  return Status(code(), std::string(context) + ": " + state_->message);
}

Status ErrnoStatus(std::string_view what, int errno_value) {
  StatusCode code = StatusCode::kIOError;
  if (errno_value == ENOENT) code = StatusCode::kNotFound;
  if (errno_value == EEXIST) code = StatusCode::kAlreadyExists;
  return Status(code, std::string(what) + ": " + std::strerror(errno_value));
}

}  // namespace stoker
