// MemoryBackend: objects in a map, for tests and as the reference every backend's conformance
// test is checked against. Any string is a name. A reader sees the object as it was when opened.
// Thread-safe.
#pragma once

#include <memory>

#include "storage/backend.h"

namespace stoker::storage {

std::unique_ptr<Backend> NewMemoryBackend();

}  // namespace stoker::storage
