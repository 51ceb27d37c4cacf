// ErrorPolicy: what a reader does with a bad read, a corrupt piece or a bad record — the loader's
// and the stream's `on_error`, and `stoker pack`'s. The one reading of its names ("fail",
// "skip") for the CLI, the bindings and Python. Free functions; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "stoker/status.h"

namespace stoker {

enum class ErrorPolicy : uint8_t {
  kFail,  // a bad read or corrupt piece is the error of its batch; the loader then stops
  kSkip,  // the bad piece becomes a masked hole (labels -100) and is counted; the plan is unchanged
};

// "fail", "skip".
std::string_view ErrorPolicyName(ErrorPolicy policy);
// kInvalidArgument naming the accepted values.
Result<ErrorPolicy> ParseErrorPolicy(std::string_view name);

}  // namespace stoker
