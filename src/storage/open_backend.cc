#include "storage/open_backend.h"

#include "common/uri.h"
#include "storage/file_backend.h"

namespace stoker::storage {

Result<std::unique_ptr<Backend>> OpenBackendForUri(const std::string& uri,
                                                   const BackendOptions& options) {
  STOKER_ASSIGN_OR_RETURN(ParsedUri parsed, ParseUri(uri));
  std::unique_ptr<Backend> backend;
  switch (parsed.kind) {
    case UriKind::kFile:
      backend = NewFileBackend();
      break;
    case UriKind::kS3: {
      S3Options s3 = options.s3;
      s3.metrics = options.metrics;
      // Writes retry inside the writer, with the same policy as reads.
      if (options.retry) {
        s3.write_retry = *options.retry;
        if (s3.write_retry.metrics == nullptr) s3.write_retry.metrics = options.metrics;
      } else {
        s3.write_retry.max_attempts = 1;
      }
      STOKER_ASSIGN_OR_RETURN(backend, NewS3Backend(s3));
      break;
    }
    case UriKind::kHttp: {
      HttpBackendOptions http = options.http;
      http.metrics = options.metrics;
      backend = NewHttpBackend(http);
      break;
    }
  }
  // Remote backends count their HTTP requests themselves (one ReadAt cut into parts is one GET
  // per part; a List of many pages one LIST per page); local files are counted at the interface.
  const bool counts_http = parsed.kind != UriKind::kFile;
  if (options.faults)
    backend = NewFaultBackend(std::move(backend), *options.faults, options.fault_counts);
  if (options.concurrency)
    backend = NewConcurrencyBackend(std::move(backend), *options.concurrency);
  if (options.metrics != nullptr && !counts_http)
    backend = NewMeteringBackend(std::move(backend), options.metrics);
  if (options.retry) {
    RetryOptions retry = *options.retry;
    if (retry.metrics == nullptr) retry.metrics = options.metrics;
    backend = NewRetryBackend(std::move(backend), retry);
  }
  return backend;
}

Result<std::shared_ptr<Backend>> OpenMeteredBackendForUri(const std::string& uri,
                                                          std::shared_ptr<StorageMetrics> metrics,
                                                          BackendOptions options) {
  options.metrics = metrics.get();
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<Backend> opened, OpenBackendForUri(uri, options));
  struct Metered {
    std::shared_ptr<StorageMetrics> metrics;  // declared first: destroyed after the backend
    std::unique_ptr<Backend> backend;
  };
  auto owned = std::make_shared<Metered>(Metered{std::move(metrics), std::move(opened)});
  return std::shared_ptr<Backend>(owned, owned->backend.get());
}

}  // namespace stoker::storage
