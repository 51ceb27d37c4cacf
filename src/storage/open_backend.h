// The scheme dispatch: which Backend serves a URI, with the decorators a caller asked for, in
// the order retry(metering(concurrency(faults(backend)))) — so each attempt takes a slot of the
// per-host bound, and injected faults (SlowDown included) look to the layers above like real ones.
// Metering: s3:// and http(s):// count the HTTP requests they send (every attempt and every part,
// in the client, not at the interface); local files are metered by the decorator.
// common/uri.h's LocalPathFromUri stays the gate for call sites that read local files only;
// code that can read remote objects calls OpenBackendForUri instead. Free functions; thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "storage/backend.h"
#include "storage/concurrency_backend.h"
#include "storage/fault_backend.h"
#include "storage/http_backend.h"
#include "storage/metering_backend.h"
#include "storage/retry_backend.h"
#include "storage/s3_backend.h"

namespace stoker::storage {

struct BackendOptions {
  S3Options s3;
  HttpBackendOptions http;
  std::optional<RetryOptions> retry = RetryOptions{};                    // nullopt: no retries
  std::optional<ConcurrencyOptions> concurrency = ConcurrencyOptions{};  // nullopt: unbounded
  StorageMetrics* metrics = nullptr;   // if set: metering (and retry counts); must outlive it
  std::optional<FaultOptions> faults;  // if set: fault injection (tests)
  FaultCounts* fault_counts = nullptr;
};

// The backend for `uri`'s scheme (common/uri.h lists the served ones): kInvalidArgument for
// others, naming the served schemes; kFailedPrecondition for s3:// without credentials.
Result<std::unique_ptr<Backend>> OpenBackendForUri(const std::string& uri,
                                                   const BackendOptions& options = {});

// OpenBackendForUri metered into `metrics` (options.metrics is replaced), as a backend that also
// owns `metrics`: whoever still holds the backend (a cache's download thread, a reader that
// outlives its dataset) keeps the counters it writes to alive.
Result<std::shared_ptr<Backend>> OpenMeteredBackendForUri(const std::string& uri,
                                                          std::shared_ptr<StorageMetrics> metrics,
                                                          BackendOptions options = {});

}  // namespace stoker::storage
