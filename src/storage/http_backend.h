// HttpBackend: read-only http:// and https:// objects. Stat is a HEAD (redirects followed);
// reads are Range GETs of at most part_bytes, and every answer must be 206 Partial Content with a
// Content-Range that starts where asked and a body of exactly the bytes asked for. A server that
// ignores Range (answers 200 with the whole object) is refused with kFailedPrecondition rather
// than misread — except for a read of the whole object, where 200 is the right answer. List and
// OpenForWrite are kUnimplemented. Thread-safe (connections are pooled, see http_client.h).
#pragma once

#include <memory>

#include "storage/backend.h"
#include "storage/http_client.h"
#include "storage/metering_backend.h"
#include "storage/ranged_source.h"

namespace stoker::storage {

struct HttpBackendOptions {
  size_t part_bytes = kDefaultPartBytes;
  long stall_timeout_s = StallTimeoutFromEnv();  // http_client.h
  // If set, every HTTP request is counted here (http_client.h). Must outlive the backend.
  StorageMetrics* metrics = nullptr;
};

std::unique_ptr<Backend> NewHttpBackend(const HttpBackendOptions& options = {});

}  // namespace stoker::storage
