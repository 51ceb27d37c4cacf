#include "storage/s3_backend.h"

#include "common/uri.h"

namespace stoker::storage {
namespace {

constexpr size_t kMinPartBytes = size_t{5} << 20;

Result<ParsedUri> ParseS3(const std::string& uri) {
  STOKER_ASSIGN_OR_RETURN(ParsedUri parsed, ParseUri(uri));
  if (parsed.kind != UriKind::kS3)
    return InvalidArgument(uri + ": the S3 backend serves s3:// URIs only");
  return parsed;
}

class S3Writer final : public Writer {
 public:
  S3Writer(std::shared_ptr<const S3Client> client, ParsedUri uri, size_t part_bytes,
           std::shared_ptr<const Backoff> backoff)
      : client_(std::move(client)),
        uri_(std::move(uri)),
        part_bytes_(part_bytes),
        backoff_(std::move(backoff)) {}
  ~S3Writer() override {
    if (!closed_ && !upload_id_.empty()) {
      (void)client_->AbortMultipartUpload(uri_.bucket, uri_.key, upload_id_);
    }
  }

  Status Append(std::string_view bytes) override {
    if (closed_) return FailedPrecondition(Name() + ": append after close");
    buffer_.append(bytes);
    while (buffer_.size() >= part_bytes_) {
      STOKER_RETURN_IF_ERROR(Fail(SendPart(std::string_view(buffer_).substr(0, part_bytes_))));
      buffer_.erase(0, part_bytes_);
    }
    return Status::OK();
  }

  Status Close() override {
    if (closed_) return FailedPrecondition(Name() + ": closed twice");
    if (upload_id_.empty()) {
      closed_ = true;
      return backoff_->Run([&] { return client_->PutObject(uri_.bucket, uri_.key, buffer_); });
    }
    if (!buffer_.empty()) STOKER_RETURN_IF_ERROR(Fail(SendPart(buffer_)));
    STOKER_RETURN_IF_ERROR(Fail(backoff_->Run([&] {
      return client_->CompleteMultipartUpload(uri_.bucket, uri_.key, upload_id_, etags_);
    })));
    closed_ = true;
    return Status::OK();
  }

 private:
  std::string Name() const { return "s3://" + uri_.bucket + "/" + uri_.key; }

  Status SendPart(std::string_view part) {
    if (upload_id_.empty()) {
      STOKER_ASSIGN_OR_RETURN(upload_id_, backoff_->Run([&] {
        return client_->CreateMultipartUpload(uri_.bucket, uri_.key);
      }));
    }
    const int number = static_cast<int>(etags_.size()) + 1;
    STOKER_ASSIGN_OR_RETURN(std::string etag, backoff_->Run([&] {
      return client_->UploadPart(uri_.bucket, uri_.key, upload_id_, number, part);
    }));
    etags_.push_back(std::move(etag));
    return Status::OK();
  }

  // A failed part ends the upload: abort it so that S3 keeps no orphaned parts.
  Status Fail(Status status) {
    if (status.ok()) return status;
    if (!upload_id_.empty()) (void)client_->AbortMultipartUpload(uri_.bucket, uri_.key, upload_id_);
    closed_ = true;
    return status;
  }

  std::shared_ptr<const S3Client> client_;
  ParsedUri uri_;
  size_t part_bytes_;
  std::shared_ptr<const Backoff> backoff_;
  std::string buffer_;
  std::string upload_id_;
  std::vector<std::string> etags_;
  bool closed_ = false;
};

class S3Backend final : public Backend {
 public:
  S3Backend(std::shared_ptr<const S3Client> client, const S3Options& options)
      : client_(std::move(client)),
        options_(options),
        write_backoff_(std::make_shared<const Backoff>(options.write_retry)) {}

  Result<ObjectInfo> Stat(const std::string& uri) const override {
    STOKER_ASSIGN_OR_RETURN(ParsedUri s3, ParseS3(uri));
    return client_->Head(s3.bucket, s3.key);
  }

  Result<std::vector<ObjectInfo>> List(const std::string& prefix) const override {
    STOKER_ASSIGN_OR_RETURN(ParsedUri s3, ParseS3(prefix));
    std::vector<ObjectInfo> out;
    std::string token;
    do {
      STOKER_ASSIGN_OR_RETURN(S3ListPage page,
                              client_->ListPage(s3.bucket, s3.key, token, options_.list_page_keys));
      for (S3ListPage::Entry& e : page.entries) {
        out.push_back({"s3://" + s3.bucket + "/" + e.key, e.size_bytes, std::move(e.etag)});
      }
      if (page.truncated && page.next_token.empty()) {
        return Corruption(prefix + ": truncated ListObjectsV2 page without a continuation token");
      }
      token = page.truncated ? page.next_token : "";
    } while (!token.empty());
    return out;
  }

  Result<std::unique_ptr<ByteSource>> OpenForRead(const std::string& uri) const override {
    STOKER_ASSIGN_OR_RETURN(ParsedUri s3, ParseS3(uri));
    STOKER_ASSIGN_OR_RETURN(ObjectInfo info, client_->Head(s3.bucket, s3.key));
    return OpenForReadWithSize(uri, info.size_bytes);
  }

  Result<std::unique_ptr<ByteSource>> OpenForReadWithSize(const std::string& uri,
                                                          uint64_t size_bytes) const override {
    STOKER_ASSIGN_OR_RETURN(ParsedUri s3, ParseS3(uri));
    std::shared_ptr<const S3Client> client = client_;
    return NewRangedSource(uri, size_bytes, options_.read_part_bytes,
                           [client, s3, size_bytes](uint64_t offset, size_t n, char* out) {
                             return client->GetRange(s3.bucket, s3.key, offset, n, out, size_bytes);
                           });
  }

  Result<std::unique_ptr<Writer>> OpenForWrite(const std::string& uri) const override {
    STOKER_ASSIGN_OR_RETURN(ParsedUri s3, ParseS3(uri));
    if (s3.key.empty())
      return InvalidArgument(uri + ": an object to write needs a key (s3://bucket/key)");
    return std::unique_ptr<Writer>(
        new S3Writer(client_, std::move(s3), options_.write_part_bytes, write_backoff_));
  }

 private:
  std::shared_ptr<const S3Client> client_;
  S3Options options_;
  std::shared_ptr<const Backoff> write_backoff_;
};

}  // namespace

Result<std::unique_ptr<Backend>> NewS3Backend(const S3Options& options) {
  if (options.write_part_bytes < kMinPartBytes) {
    return InvalidArgument("S3 write part size " + std::to_string(options.write_part_bytes) +
                           " bytes is below S3's minimum of 5 MiB");
  }
  STOKER_ASSIGN_OR_RETURN(AwsConfig config, LoadAwsConfig(options.endpoint));
  HttpClientOptions http;
  http.metrics = options.metrics;
  http.stall_timeout_s = options.stall_timeout_s;
  auto client = std::make_shared<const S3Client>(std::move(config), options.addressing, http);
  return std::unique_ptr<Backend>(new S3Backend(std::move(client), options));
}

}  // namespace stoker::storage
