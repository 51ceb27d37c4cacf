// `stoker records`: read record shards (WebDataset, TFRecord, MDS, LitData, Parquet, Arrow) and
// count them or dump them as JSON lines — the record-source interface as a tool, for checks and
// for the reader benchmark.
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "number_flags.h"
#include "records/record_source.h"

namespace stoker::cli {
namespace {

struct RecordsArgs {
  std::vector<std::string> inputs;
  std::string input_format = "auto";
  bool dump = false;
  uint64_t limit = 0;
};

std::string Hex(const std::string& s) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  out.reserve(2 * s.size());
  for (unsigned char c : s) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

nlohmann::json FieldJson(const Field& f) {
  nlohmann::json j = {{"name_hex", Hex(f.name)}, {"type", std::string(FieldTypeName(f.type))}};
  switch (f.type) {
    case FieldType::kBytes:
    case FieldType::kString:
    case FieldType::kJson: {
      nlohmann::json values = nlohmann::json::array();
      if (f.byte_values > 0) values.push_back(Hex(f.bytes));
      for (const std::string& m : f.more_bytes) values.push_back(Hex(m));
      j["hex"] = values;
      break;
    }
    case FieldType::kInt:
    case FieldType::kTokens:
      j["ints"] = f.ints;
      break;
    case FieldType::kFloat:
      j["floats"] = f.floats;
      break;
  }
  return j;
}

int RunRecords(const RecordsArgs& args) {
  Result<RecordFormat> format = ParseRecordFormat(args.input_format);
  if (!format.ok()) return ReportError("records", format.status());
  Result<std::vector<RecordShard>> shards = ExpandRecordShards(args.inputs, *format);
  if (!shards.ok()) return ReportError("records", shards.status());
  auto start = std::chrono::steady_clock::now();
  uint64_t records = 0, bytes = 0;
  for (const RecordShard& shard : *shards) {
    Result<std::unique_ptr<RecordSource>> source = OpenRecordShard(shard);
    if (!source.ok()) return ReportError("records", source.status());
    while (args.limit == 0 || records < args.limit) {
      Result<std::optional<Record>> r = (*source)->Next();
      if (!r.ok()) return ReportError("records", r.status());
      if (!*r) break;
      ++records;
      for (const Field& f : (*r)->fields) {
        bytes += f.bytes.size() + 8 * (f.ints.size() + f.floats.size());
        for (const std::string& m : f.more_bytes) bytes += m.size();
      }
      if (args.dump) {
        nlohmann::json j = {{"key_hex", Hex((*r)->key)},
                            {"source", (*r)->source},
                            {"index", (*r)->index},
                            {"offset", (*r)->offset_bytes}};
        nlohmann::json fields = nlohmann::json::array();
        for (const Field& f : (*r)->fields) fields.push_back(FieldJson(f));
        j["fields"] = std::move(fields);
        std::printf("%s\n", j.dump().c_str());
      }
    }
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!args.dump) {
    nlohmann::json j = {
        {"shards", shards->size()}, {"records", records}, {"field_bytes", bytes}, {"seconds", s}};
    std::printf("%s\n", j.dump().c_str());
  }
  return kExitOk;
}

}  // namespace

void AddRecordsCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<RecordsArgs>();
  auto* sub = app.add_subcommand(
      "records", "Read record shards (WebDataset, TFRecord, MDS): count them or dump them");
  sub->footer(
      "Without --dump, prints one JSON object: shards, records, field_bytes, seconds.\n"
      "With --dump, one JSON line per record: key_hex, source, index, offset and fields "
      "(name_hex,\n"
      "type, and hex / ints / floats). Example: stoker records "
      "'shards/train-{000000..000009}.tar'");
  sub->add_option("inputs", args->inputs,
                  "Shards, brace patterns, directories, MDS/LitData index dirs, save_to_disk dirs")
      ->required();
  sub->add_option("--input-format", args->input_format,
                  "auto, webdataset, tfrecord, mds, litdata, parquet or arrow")
      ->check(CLI::IsMember(
          {"auto", "webdataset", "wds", "tfrecord", "mds", "litdata", "parquet", "arrow", "hf"}))
      ->capture_default_str();
  sub->add_flag("--dump", args->dump, "Print every record as a JSON line");
  sub->add_option("--limit", args->limit, "Stop after this many records (0: all)")
      ->check(WholeNumber<uint64_t>());
  sub->callback([args, exit_code] { *exit_code = RunRecords(*args); });
}

}  // namespace stoker::cli
