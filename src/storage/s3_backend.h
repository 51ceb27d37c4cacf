// S3Backend: s3://bucket/key objects through S3Client. Reads are ranged GETs of at most
// read_part_bytes; List pages through ListObjectsV2 (list_page_keys keys a request); a Writer
// sends one PutObject for an object smaller than write_part_bytes, else a multipart upload of
// write_part_bytes parts (S3's minimum part is 5 MiB), completed on Close and aborted if the
// writer is destroyed first or a part fails for good; each write step is retried on its own
// (write_retry). Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "storage/backend.h"
#include "storage/metering_backend.h"
#include "storage/ranged_source.h"
#include "storage/retry_backend.h"
#include "storage/s3_client.h"

namespace stoker::storage {

struct S3Options {
  std::string endpoint;  // overrides AWS_ENDPOINT_URL when not empty
  S3Addressing addressing = S3Addressing::kAuto;
  size_t read_part_bytes = kDefaultPartBytes;
  size_t write_part_bytes = kDefaultPartBytes;  // at least 5 MiB
  int list_page_keys = 1000;
  long stall_timeout_s = StallTimeoutFromEnv();  // http_client.h
  // Retries of each write step (PutObject, CreateMultipartUpload, UploadPart of one part,
  // CompleteMultipartUpload), which the retry decorator cannot repeat from outside a Writer.
  RetryOptions write_retry;
  // If set, every HTTP request the backend sends is counted here (http_client.h), so that one
  // ReadAt cut into parts counts one GET per part. Must outlive the backend.
  StorageMetrics* metrics = nullptr;
};

// Finds credentials and region (aws_config.h); kFailedPrecondition without credentials,
// kInvalidArgument for a write part under 5 MiB.
Result<std::unique_ptr<Backend>> NewS3Backend(const S3Options& options);

}  // namespace stoker::storage
