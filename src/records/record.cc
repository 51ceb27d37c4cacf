#include "records/record.h"

namespace stoker {

std::string_view FieldTypeName(FieldType type) {
  // Indexed by FieldType, in its order.
  static constexpr std::string_view kNames[] = {"bytes", "string", "int",
                                                "float", "tokens", "json"};
  const auto i = static_cast<size_t>(type);
  return i < std::size(kNames) ? kNames[i] : "?";
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
