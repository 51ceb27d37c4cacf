#include "stoker/cli_common.h"

#include <cstdio>
#include <string>

namespace stoker::cli {

int ReportError(std::string_view command, const Status& status) {
  std::fprintf(stderr, "stoker %.*s: error: %s\n", static_cast<int>(command.size()), command.data(),
               status.message().c_str());
  return kExitError;
}

}  // namespace stoker::cli
