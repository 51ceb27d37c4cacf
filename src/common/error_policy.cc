#include "stoker/error_policy.h"

#include <string>

namespace stoker {

std::string_view ErrorPolicyName(ErrorPolicy policy) {
  return policy == ErrorPolicy::kSkip ? "skip" : "fail";
}

Result<ErrorPolicy> ParseErrorPolicy(std::string_view name) {
  if (name == "fail") return ErrorPolicy::kFail;
  if (name == "skip") return ErrorPolicy::kSkip;
  return InvalidArgument("on_error must be 'fail' or 'skip', not '" + std::string(name) + "'");
}

}  // namespace stoker
