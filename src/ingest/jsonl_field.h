// JsonlFieldReader: the string field of one JSONL line (pack's and the stream's "text" field),
// parsed by simdjson. A pack spent about a quarter of its CPU in nlohmann's DOM parse of each
// line (lexing into std::string, a std::map per object); simdjson validates the whole line at
// GB/s and hands back a view of the field. Speed is the point here, so the library is simdjson,
// not the nlohmann used for small files (manifests, configs).
//
// The rules are those of the nlohmann parse it replaces: the whole line must be one valid JSON
// value (nothing after it but whitespace), an object, and with duplicate keys the last one wins
// (as in Python's json.loads). A line simdjson refuses is parsed again by nlohmann (integers past
// 64 bits and nesting past 1024 levels are valid JSON that simdjson refuses), so each line is
// accepted or refused exactly as before, with nlohmann's message.
//
// Thread contract: not thread-safe; one reader per thread (pack and the stream keep one per
// thread, thread_local). A view returned by Read is valid until the next Read on this reader.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace stoker {

class JsonlFieldReader {
 public:
  enum class Outcome {
    kFound,        // *text is the field's string
    kInvalidJson,  // *why says what is wrong with the line
    kNotObject,    // the line is valid JSON but not an object
    kMissing,      // the object has no such field
    kNotString,    // *why is the field's JSON type: "number", "array", "null", ...
  };

  JsonlFieldReader();
  ~JsonlFieldReader();
  JsonlFieldReader(const JsonlFieldReader&) = delete;
  JsonlFieldReader& operator=(const JsonlFieldReader&) = delete;

  // Parses `line` (one JSON value; UTF-8, already checked by the caller's policy) and looks up
  // the top-level `field`.
  Outcome Read(std::string_view line, std::string_view field, std::string_view* text,
               std::string* why);

  // The calling thread's reader.
  static JsonlFieldReader& ForThread();

 private:
  Outcome ReadSlowly(std::string_view line, std::string_view field, std::string_view* text,
                     std::string* why);

  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace stoker
