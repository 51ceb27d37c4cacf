// libFuzzer target: TFRecord framing (CRCs) and tf.train.Example decoding. A decoded Example
// re-encodes and decodes to the same fields.
#include <cstddef>
#include <cstdint>
#include <string>

#include "records/tf_example.h"
#include "records/tfrecord.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  std::vector<stoker::Field> fields;
  if (stoker::DecodeTfExample(bytes, &fields).ok()) {
    std::vector<stoker::Field> again;
    if (!stoker::DecodeTfExample(stoker::EncodeTfExample(fields), &again).ok()) __builtin_trap();
    if (again.size() != fields.size()) __builtin_trap();
  }
  // The same bytes as a whole file, and framed as one valid record.
  for (const std::string& file : {bytes, stoker::FrameTfRecord(bytes)}) {
    auto source = stoker::OpenTfRecordShard(stoker::MemorySource("fuzz.tfrecord", file));
    for (int i = 0; i < 100000; ++i) {
      auto r = source->Next();
      if (!r.ok() || !*r) break;
    }
  }
  return 0;
}
