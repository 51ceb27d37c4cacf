#include "ingest/pack_args.h"

#include <algorithm>
#include <thread>

#include "common/env.h"
#include "common/human_size.h"
#include "common/uri.h"
#include "ingest/chat_inputs.h"
#include "ingest/input_plan.h"
#include "records/record_store.h"
#include "stoker/error_policy.h"
#include "text/utf8.h"

namespace stoker {

Result<PackOptions> PackOptionsFromArgs(const PackArgs& a) {
  PackOptions o;
  for (const std::string& input : a.inputs) {
    // Remote record inputs (s3://, http(s)://) are read where they are (records/record_store.h).
    if (IsRemoteRecordUri(input)) {
      o.inputs.push_back(input);
      continue;
    }
    STOKER_ASSIGN_OR_RETURN(std::string local, LocalPathFromUri(input));
    o.inputs.push_back(std::move(local));
  }
  STOKER_ASSIGN_OR_RETURN(o.output_dir, LocalPathFromUri(a.output));
  o.encoder.text_field = a.text_field;
  o.key_field = a.key_field;
  STOKER_ASSIGN_OR_RETURN(o.input_format, ParsePackInputFormat(a.input_format));
  STOKER_ASSIGN_OR_RETURN(o.encoder.utf8, ParseUtf8Policy(a.utf8));
  STOKER_ASSIGN_OR_RETURN(ErrorPolicy on_error, ParseErrorPolicy(a.on_error));
  o.encoder.skip_bad_lines = on_error == ErrorPolicy::kSkip;
  STOKER_ASSIGN_OR_RETURN(o.shard_size_bytes, ParseSize(a.shard_size));
  if (a.num_workers < 0) {
    return InvalidArgument("num_workers must be >= 0 (0 = the node's cores / LOCAL_WORLD_SIZE)");
  }
  o.threads = a.num_workers > 0 ? a.num_workers : DefaultThreadsPerRank();
  STOKER_ASSIGN_OR_RETURN(TaskAssignment task, ResolveTask(a));
  o.task_index = task.index;
  o.task_count = task.count;
  if (a.dtype != "auto") {
    STOKER_ASSIGN_OR_RETURN(TokenDType d, ParseTokenDType(a.dtype));
    o.dtype = d;
  }
  o.overwrite = a.overwrite;
  STOKER_ASSIGN_OR_RETURN(o.chat, ChatEncoderForPack(a, o));
  return o;
}

Result<TaskAssignment> ResolveTask(const PackArgs& args) {
  if (args.task_index.has_value() != args.task_count.has_value()) {
    return InvalidArgument("task index and task count go together: set both or neither");
  }
  if (args.task_count) {
    if (*args.task_count == 0 || *args.task_index >= *args.task_count) {
      return InvalidArgument("task index " + std::to_string(*args.task_index) +
                             " is not below task count " + std::to_string(*args.task_count));
    }
    return TaskAssignment{*args.task_index, *args.task_count, "flags"};
  }
  return TaskFromEnvironment();
}

Result<PackOptions> PackOptionsFromArgs(const PackArgs& args, PackDestination* destination) {
  // The arguments first: a bad flag is reported before any request is made.
  PackArgs local = args;
  local.output = ".";
  STOKER_ASSIGN_OR_RETURN(PackOptions o, PackOptionsFromArgs(local));
  STOKER_ASSIGN_OR_RETURN(*destination, PreparePackDestination(args.output, args.overwrite));
  o.output_dir = destination->local_dir;
  return o;
}

}  // namespace stoker
