#include "common/human_size.h"
#include "ingest/pack_args.h"

namespace stoker {
namespace {

OptionTable<PackArgs> BuildPackArgsTable() {
  using A = PackArgs;
  OptionTable<A> t;
  t.push_back(OtherOption<A>("inputs", "JSONL / text files and directories, record shards"));
  t.push_back(TextOption<A>("output", "Dataset directory to write", &A::output).Cli("--output"));
  t.push_back(TextOption<A>("tokenizer",
                            "bytes | a model folder (its tokenizer.json or tokenizer.model) | "
                            "PATH.model (SentencePiece) | PATH/tokenizer.json | PATH.tiktoken",
                            &A::tokenizer)
                  .Cli("--tokenizer"));
  t.push_back(TextOption<A>("text_field",
                            "JSONL field holding the text; for record shards, the field holding "
                            "the text or the token ids (copied without re-tokenizing)",
                            &A::text_field)
                  .Cli("--text-field"));
  OptionRow<A> shard_size = TextOption<A>(
      "shard_size", "Close a shard at this .bin size, e.g. 64MiB, 1GiB (a document is never split)",
      &A::shard_size);
  shard_size.set = [](A& a, std::string_view text) -> Status {
    Result<uint64_t> bytes = ParseSize(text);
    if (!bytes.ok()) return bytes.status().WithContext("shard_size");
    a.shard_size = std::string(text);
    return Status::OK();
  };
  t.push_back(std::move(shard_size).Cli("--shard-size"));
  t.push_back(WholeOption<A>("num_workers",
                             "Tokenizer threads (0 = the node's cores / LOCAL_WORLD_SIZE: all of "
                             "them outside a launcher)",
                             &A::num_workers)
                  .Cli("--num-workers"));
  t.push_back(OtherOption<A>("task_index", "This task's index, 0-based").Cli("--task-index"));
  t.push_back(OtherOption<A>("task_count", "Number of tasks in the job").Cli("--task-count"));
  t.push_back(ChoiceTextOption<A>("utf8",
                                  "Invalid UTF-8: replace (with U+FFFD), skip (the document) or "
                                  "fail",
                                  &A::utf8, {"replace", "skip", "fail"})
                  .Cli("--utf8"));
  t.push_back(ChoiceTextOption<A>("on_error",
                                  "JSONL lines that are not JSON objects with a string text "
                                  "field, records without the field, and the rest of a corrupt "
                                  "record shard: fail or skip",
                                  &A::on_error, {"fail", "skip"})
                  .Cli("--on-error"));
  t.push_back(ChoiceTextOption<A>("dtype", "Token type: auto, uint16 or int32", &A::dtype,
                                  {"auto", "uint16", "int32"})
                  .Cli("--dtype"));
  t.push_back(BoolOption<A>("overwrite",
                            "Replace a dataset already in DATASET (a task: redo it even if its "
                            "receipt matches)",
                            &A::overwrite)
                  .Cli("--overwrite"));
  t.push_back(ChoiceTextOption<A>("input_format",
                                  "auto (record shards by name, else JSONL/text), jsonl, text, "
                                  "webdataset, tfrecord, mds, litdata, parquet or arrow (Hugging "
                                  "Face save_to_disk)",
                                  &A::input_format,
                                  {"auto", "jsonl", "text", "webdataset", "wds", "tfrecord", "mds",
                                   "litdata", "parquet", "arrow", "hf"})
                  .Cli("--input-format"));
  t.push_back(TextOption<A>("key_field",
                            "Record shards: the field that names a record in messages (default: "
                            "the format's key)",
                            &A::key_field)
                  .Cli("--key-field"));
  t.push_back(
      OtherOption<A>("tokenizer_options", "The tokenizer's options (TokenizerOptionTable's rows)")
          .Py("-"));
  t.push_back(ChoiceTextOption<A>("format",
                                  "stoker (token shards), tfrecord (token shards plus "
                                  "DATASET/tfrecord/*.tfrecord of tf.train.Example input_ids), or "
                                  "webdataset (the input files themselves, grouped by key into tar "
                                  "shards; no tokenization)",
                                  &A::format, {"stoker", "webdataset", "tfrecord"})
                  .Cli("--format"));
  t.push_back(TextOption<A>("train_on", "Chat data: the tokens the loss mask trains", &A::train_on)
                  .Cli("--train-on"));
  t.push_back(
      TextOption<A>("chat_template", "Chat data: a Jinja chat template file", &A::chat_template)
          .Cli("--chat-template"));
  t.push_back(
      TextOption<A>("chat_field", "Chat data: the field holding the conversation", &A::chat_field)
          .Cli("--chat-field"));
  t.push_back(TextOption<A>("chat_template_kwargs",
                            "Chat data: extra template variables, a JSON object such as "
                            "'{\"enable_thinking\": false}' (transformers' apply_chat_template "
                            "keyword arguments)",
                            &A::chat_template_kwargs)
                  .Cli("--chat-template-kwargs"));
  return t;
}

}  // namespace

const OptionTable<PackArgs>& PackArgsTable() {
  static const OptionTable<PackArgs> table = BuildPackArgsTable();
  return table;
}

}  // namespace stoker
