#include "stoker/cmd_index_stream.h"

#include <cstdio>

#include "common/cache_root.h"
#include "common/human_size.h"
#include "common/progress.h"
#include "stoker/cli_common.h"
#include "stream/prescan.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

namespace stoker::cli {

void AddStreamIndexFlags(CLI::App* sub, StreamIndexArgs* a) {
  sub->allow_extras();  // INPUT... under --stream (RunStreamIndex refuses stray options)
  sub->add_flag("--stream", a->stream,
                "The INPUTs are streamed inputs (JSONL, .gz, .zst, text, record shards): write "
                "each file's pre-scan (document offsets, tokens, bytes) so stoker.Stream and "
                "bench --stream fix their steps per epoch without reading the data "
                "(docs/streaming.md). Written to the cache directory, or beside the data with "
                "--beside; the tokenizer and reader flags must match the stream's");
  AddStreamTextFlags(sub, a);
  sub->add_option("--utf8", a->utf8, "--stream: invalid UTF-8 policy (as the stream's utf8=)")
      ->check(CLI::IsMember({"replace", "skip", "fail"}))
      ->capture_default_str();
  sub->add_option("--on-error", a->on_error, "--stream: bad records: fail or skip (as the "
                                             "loader's on_error=)")
      ->check(CLI::IsMember({"fail", "skip"}))
      ->capture_default_str();
  sub->add_flag("--beside", a->beside,
                "--stream: write .<file>.stoker-scan beside each input file (hidden) instead of "
                "into the cache directory");
  sub->add_option("--cache-dir", a->cache_dir,
                  "--stream: the directory of the scans (default: stream-scan/ in the cache "
                  "root, " +
                      std::string(kCacheRootRule) + ")")
      ->transform(LocalFile());
}

int RunStreamIndex(const std::vector<std::string>& inputs, const StreamIndexArgs& a) {
  for (const std::string& in : inputs) {
    if (!in.empty() && in[0] == '-') {
      return ReportError("index", InvalidArgument("unknown option " + in));
    }
  }
  auto ctx = std::make_shared<stream::StreamContext>();
  Result<std::unique_ptr<Tokenizer>> tok = OpenTokenizer(a.tokenizer, a.tokenizer_options);
  if (!tok.ok()) return ReportError("index", tok.status());
  ctx->tokenizer = std::move(*tok);
  Result<Utf8Policy> utf8 = ParseUtf8Policy(a.utf8);
  if (!utf8.ok()) return ReportError("index", utf8.status());
  stream::ReaderOptions& r = ctx->config.reader;
  r.encoder.text_field = a.text_field;
  r.encoder.utf8 = *utf8;
  r.encoder.skip_bad_lines = r.skip_corrupt_shards = a.on_error == "skip";
  r.encoder.skip_hint = stream::kStreamSkipHint;
  Result<std::vector<stream::StreamShard>> shards = stream::MakeShards(inputs, 1);
  if (!shards.ok()) return ReportError("index", shards.status());
  ctx->shards = std::move(*shards);
  stream::PrescanOptions po;
  po.write = true;
  po.write_beside = a.beside;
  po.cache_dir = a.cache_dir.empty() ? stream::DefaultScanCacheDir() : a.cache_dir;
  stream::PrescanSummary sum;
  Result<std::vector<std::vector<uint32_t>>> lengths = stream::PrescanShards(*ctx, po, &sum);
  if (!lengths.ok()) return ReportError("index", lengths.status());
  std::printf("index: scanned %llu file(s): %s documents, %s tokens, %s of text; wrote %zu "
              "scan file(s)%s%s\n",
              static_cast<unsigned long long>(sum.files), FormatCount(sum.documents).c_str(),
              FormatCount(sum.tokens).c_str(), FormatSize(sum.bytes).c_str(), sum.written.size(),
              a.beside ? " beside the data" : " in ", a.beside ? "" : po.cache_dir.c_str());
  return kExitOk;
}

}  // namespace stoker::cli
