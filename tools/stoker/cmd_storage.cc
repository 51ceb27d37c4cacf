// `stoker storage cat|stat|ls|put URI`: the storage layer (src/storage/) from the command line,
// for debugging access to a bucket or a server and for the end-to-end tests, which drive the S3
// and HTTP backends through it. Listed as a debugging tool until the other commands take
// remote URIs.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "number_flags.h"
#include "storage/open_backend.h"

namespace stoker::cli {
namespace {

struct StorageArgs {
  std::string uri;
  std::string file = "-";
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  bool json = false;
  bool stats = false;
  std::string s3_endpoint;
  std::string addressing = "auto";
  uint64_t part_mib = 8;
  uint64_t write_part_mib = 8;
  uint32_t list_page_keys = 1000;
  uint32_t attempts = 6;
  uint32_t retry_base_ms = 50;
  double fault_fail = 0, fault_truncate = 0;
  uint64_t fault_seed = 1;
  uint32_t fault_latency_ms = 0;
};

struct Opened {
  storage::StorageMetrics metrics;
  std::unique_ptr<storage::Backend> backend;
};

Result<std::unique_ptr<Opened>> Open(const StorageArgs& args) {
  auto opened = std::make_unique<Opened>();
  storage::BackendOptions options;
  options.s3.endpoint = args.s3_endpoint;
  options.s3.addressing = args.addressing == "path"      ? storage::S3Addressing::kPath
                          : args.addressing == "virtual" ? storage::S3Addressing::kVirtual
                                                         : storage::S3Addressing::kAuto;
  options.s3.read_part_bytes = args.part_mib << 20;
  options.s3.write_part_bytes = args.write_part_mib << 20;
  options.s3.list_page_keys = static_cast<int>(args.list_page_keys);
  options.http.part_bytes = args.part_mib << 20;
  options.retry->max_attempts = static_cast<int>(args.attempts);
  options.retry->base_delay_ms = args.retry_base_ms;
  options.metrics = &opened->metrics;
  if (args.fault_fail > 0 || args.fault_truncate > 0 || args.fault_latency_ms > 0) {
    storage::FaultOptions faults;
    faults.seed = args.fault_seed;
    faults.fail_fraction = args.fault_fail;
    faults.truncate_fraction = args.fault_truncate;
    faults.latency_ms = args.fault_latency_ms;
    options.faults = faults;
  }
  STOKER_ASSIGN_OR_RETURN(opened->backend, storage::OpenBackendForUri(args.uri, options));
  return opened;
}

Status Cat(const storage::Backend& backend, const StorageArgs& args) {
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, backend.OpenForRead(args.uri));
  const uint64_t size = source->size_bytes();
  const uint64_t end = args.length ? std::min(size, args.offset + *args.length) : size;
  std::vector<char> buffer(args.part_mib << 20);  // one ReadAt per part: faults hit each
  for (uint64_t at = args.offset; at < end;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), end - at));
    STOKER_RETURN_IF_ERROR(ReadExactlyAt(*source, at, want, buffer.data(), "range"));
    if (std::fwrite(buffer.data(), 1, want, stdout) != want) return IOError("stdout: write failed");
    at += want;
  }
  return Status::OK();
}

Status Put(const storage::Backend& backend, const StorageArgs& args) {
  FILE* in = args.file == "-" ? stdin : std::fopen(args.file.c_str(), "rb");
  if (in == nullptr) return ErrnoStatus(args.file + ": cannot open", errno);
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<storage::Writer> writer, backend.OpenForWrite(args.uri));
  std::vector<char> buffer(size_t{1} << 20);
  Status status;
  while (status.ok()) {
    const size_t got = std::fread(buffer.data(), 1, buffer.size(), in);
    if (got == 0) break;
    status = writer->Append(std::string_view(buffer.data(), got));
  }
  if (status.ok() && std::ferror(in)) status = IOError(args.file + ": read failed");
  if (in != stdin) std::fclose(in);
  return status.ok() ? writer->Close() : status;
}

nlohmann::json InfoJson(const storage::ObjectInfo& info) {
  return {{"uri", info.uri}, {"size_bytes", info.size_bytes}, {"etag", info.etag}};
}

int Run(const std::string& verb, const StorageArgs& args) {
  const std::string command = "storage " + verb;
  Result<std::unique_ptr<Opened>> opened = Open(args);
  if (!opened.ok()) return ReportError(command, opened.status());
  const storage::Backend& backend = *(*opened)->backend;
  Status status;
  if (verb == "cat") {
    status = Cat(backend, args);
  } else if (verb == "put") {
    status = Put(backend, args);
  } else if (verb == "stat") {
    Result<storage::ObjectInfo> info = backend.Stat(args.uri);
    status = info.status();
    if (info.ok() && args.json) std::printf("%s\n", InfoJson(*info).dump().c_str());
    if (info.ok() && !args.json)
      std::printf("%s\t%llu\t%s\n", info->uri.c_str(),
                  static_cast<unsigned long long>(info->size_bytes), info->etag.c_str());
  } else {
    Result<std::vector<storage::ObjectInfo>> list = backend.List(args.uri);
    status = list.status();
    if (list.ok()) {
      nlohmann::json all = nlohmann::json::array();
      for (const storage::ObjectInfo& info : *list) {
        if (args.json)
          all.push_back(InfoJson(info));
        else
          std::printf("%llu\t%s\n", static_cast<unsigned long long>(info.size_bytes),
                      info.uri.c_str());
      }
      if (args.json) std::printf("%s\n", all.dump().c_str());
    }
  }
  std::fflush(stdout);
  if (args.stats) std::fprintf(stderr, "%s\n", (*opened)->metrics.Snapshot().ToJson().c_str());
  return status.ok() ? kExitOk : ReportError(command, status);
}

void AddSharedOptions(CLI::App* sub, StorageArgs* args) {
  sub->add_option("--s3-endpoint", args->s3_endpoint,
                  "S3 endpoint URL (default: AWS_ENDPOINT_URL, else AWS in the region)");
  sub->add_option("--addressing", args->addressing,
                  "S3 addressing: path (endpoint/bucket/key), virtual (bucket.endpoint/key) or "
                  "auto (path for a custom endpoint)")
      ->check(CLI::IsMember({"auto", "path", "virtual"}));
  sub->add_option("--part-size-mib", args->part_mib, "bytes per ranged GET, in MiB (default 8)")
      ->check(WholeNumber(1, 1024));
  sub->add_option("--retries", args->attempts,
                  "attempts per request, the first included (default 6)")
      ->check(WholeNumber(1, 100));
  sub->add_option("--retry-base-ms", args->retry_base_ms, "first backoff cap in ms (default 50)")
      ->check(WholeNumber<uint32_t>());
  sub->add_flag("--stats", args->stats,
                "print request counts by kind, bytes, retries and latency as JSON on stderr");
  // Fault injection, for tests of the retry path. In a group of their own rather than hidden:
  // CLI11 2.1 drops a hidden option's name from its error messages.
  const std::string faults = "Fault injection (for testing retries)";
  sub->add_option("--fault-fail-fraction", args->fault_fail, "fail this share of requests")
      ->check(RealNumber(0, Bound::kInclusive, 1))
      ->group(faults);
  sub->add_option("--fault-truncate-fraction", args->fault_truncate,
                  "truncate this share of bodies")
      ->check(RealNumber(0, Bound::kInclusive, 1))
      ->group(faults);
  sub->add_option("--fault-seed", args->fault_seed, "seed of the fault draws")
      ->check(WholeNumber<uint64_t>())
      ->group(faults);
  sub->add_option("--fault-latency-ms", args->fault_latency_ms, "added latency per request")
      ->check(WholeNumber<uint32_t>())
      ->group(faults);
}

}  // namespace

void AddStorageCommand(CLI::App& app, int* exit_code) {
  auto* storage = app.add_subcommand("storage",
                                     "Debugging: read, list and write objects (local, s3://, "
                                     "http(s)://) through stoker's storage layer");
  storage->require_subcommand(1);
  storage->footer(
      "URIs: local paths, file:///abs/path, s3://bucket/key, http(s)://host/path (read-only).\n"
      "S3 credentials: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, or the\n"
      "profile AWS_PROFILE in ~/.aws/credentials and ~/.aws/config; region AWS_REGION or the\n"
      "profile's; endpoint --s3-endpoint or AWS_ENDPOINT_URL (MinIO, Ceph, R2, moto).\n"
      "Exit status: 0 ok, 2 error (one line on stderr naming the object; never the secret).\n"
      "Examples:\n"
      "  stoker storage ls s3://bucket/dataset/\n"
      "  stoker storage stat --json https://host/shard-000.bin\n"
      "  stoker storage cat s3://bucket/dataset/manifest.json --offset 0 --length 512\n"
      "  stoker storage put s3://bucket/dataset/shard-000.bin shard-000.bin --stats");
  struct Verb {
    const char* name;
    const char* help;
  };
  for (const Verb& verb :
       {Verb{"cat", "write an object (or a byte range of it) to stdout"},
        Verb{"stat", "print an object's URI, size and ETag"},
        Verb{"ls", "list every object whose URI starts with PREFIX"},
        Verb{"put", "write FILE (or stdin) as an object; visible only when complete"}}) {
    auto args = std::make_shared<StorageArgs>();
    auto* sub = storage->add_subcommand(verb.name, verb.help);
    const std::string name = verb.name;
    sub->add_option(name == "ls" ? "PREFIX" : "URI", args->uri, "object URI or path")->required();
    if (name == "put") {
      sub->add_option("FILE", args->file, "file to upload; - (the default) for stdin");
      sub->add_option("--write-part-size-mib", args->write_part_mib,
                      "multipart upload part size in MiB (S3 minimum 5; default 8)")
          ->check(WholeNumber(5, 5120));
    }
    if (name == "cat") {
      sub->add_option("--offset", args->offset, "first byte to write (default 0)")
          ->check(WholeNumber<uint64_t>());
      sub->add_option("--length", args->length, "bytes to write (default: to the end)")
          ->check(WholeNumber<uint64_t>());
    }
    if (name == "ls") {
      sub->add_option("--page-keys", args->list_page_keys,
                      "keys per S3 LIST request (default 1000)")
          ->check(WholeNumber(1, 1000));
    }
    if (name == "stat" || name == "ls") sub->add_flag("--json", args->json, "print JSON");
    AddSharedOptions(sub, args.get());
    sub->callback([name, args, exit_code] { *exit_code = Run(name, *args); });
  }
}

}  // namespace stoker::cli
