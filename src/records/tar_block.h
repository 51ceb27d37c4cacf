// The unit of the tar format (POSIX ustar): every header and every padded body is whole blocks.
#pragma once

#include <cstddef>

namespace stoker {

inline constexpr size_t kTarBlock = 512;

}  // namespace stoker
