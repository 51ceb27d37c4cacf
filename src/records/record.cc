#include "records/record.h"

namespace stoker {

std::string_view FieldTypeName(FieldType type) {
  switch (type) {
    case FieldType::kBytes:
      return "bytes";
    case FieldType::kString:
      return "string";
    case FieldType::kInt:
      return "int";
    case FieldType::kFloat:
      return "float";
    case FieldType::kTokens:
      return "tokens";
    case FieldType::kJson:
      return "json";
  }
  return "?";
}

const Field* Record::Find(std::string_view name) const {
  for (const Field& f : fields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string Record::Where() const {
  return source + " record " + std::to_string(index) + " (key '" + key + "', byte offset " +
         std::to_string(offset_bytes) + ")";
}

}  // namespace stoker
