// JSONL and text inputs on a remote backend (s3://, http(s)://) for `stoker pack`: an object, a
// glob pattern ('*', '?', '[...]', s3:// only: one ListObjectsV2 listing from the pattern's
// literal prefix), a brace pattern, or (s3://, --input-format jsonl|text) a prefix listed as a
// directory. Each object is one input file read where it is, streamed and decompressed
// (.gz/.zst) as a local one; nothing is downloaded whole. Free functions; thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ingest/byte_stream.h"
#include "ingest/input_plan.h"
#include "stoker/status.h"

namespace stoker {

// True when `input` is remote and names JSONL or text by its suffix (.jsonl, .ndjson, .json,
// .txt, .text, before any .gz/.zst): pack reads it as lines or whole documents, not as records.
bool IsRemotePlainInput(const std::string& input);

// The objects `input` names, in sorted order, as InputFiles of kind kJsonl or kText (by name)
// whose shard.store is the backend they are read through. kNotFound when nothing matches.
Result<std::vector<InputFile>> ExpandRemotePlainInput(const std::string& input);

// The (decompressed) bytes of a JSONL or text input, local or remote (ExpandRemotePlainInput's
// store). kNotFound if it is missing.
Result<std::unique_ptr<ByteStream>> OpenInputStream(const InputFile& file);

}  // namespace stoker
