#include "text/unicode_nfc.h"

#include <utf8proc.h>

#include <cstdlib>

namespace stoker {

Status NormalizeNfc(std::string_view utf8, std::string* out) {
  bool ascii = true;
  for (char c : utf8) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) {
    out->assign(utf8);
    return Status::OK();
  }
  utf8proc_uint8_t* dst = nullptr;
  utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(utf8.data()),
                   static_cast<utf8proc_ssize_t>(utf8.size()), &dst,
                   static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (n < 0) {
    return InvalidArgument(std::string("NFC normalization failed: ") + utf8proc_errmsg(n));
  }
  out->assign(reinterpret_cast<const char*>(dst), static_cast<size_t>(n));
  std::free(dst);
  return Status::OK();
}

}  // namespace stoker
