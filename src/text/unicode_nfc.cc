#include "text/unicode_nfc.h"

#include <utf8proc.h>

#include <cstdlib>
#include <limits>

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

namespace {

// `cluster` in `form` into *out (cleared first).
Status NormalizeCluster(std::string_view cluster, UnicodeForm form, std::string* out) {
  int options = UTF8PROC_STABLE | UTF8PROC_COMPOSE;
  if (form == UnicodeForm::kNfkc) options |= UTF8PROC_COMPAT;
  utf8proc_uint8_t* dst = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(cluster.data()),
                                          static_cast<utf8proc_ssize_t>(cluster.size()), &dst,
                                          static_cast<utf8proc_option_t>(options));
  if (n < 0) return InvalidArgument(std::string("normalization failed: ") + utf8proc_errmsg(n));
  out->assign(reinterpret_cast<const char*>(dst), static_cast<size_t>(n));
  std::free(dst);
  return Status::OK();
}

}  // namespace

Status NormalizeWithOffsets(std::string_view utf8, UnicodeForm form, NormalizedText* out) {
  if (utf8.size() >= std::numeric_limits<uint32_t>::max()) {
    return InvalidArgument("text too long to normalize with offsets (4 GiB or more)");
  }
  out->text.clear();
  out->lo.clear();
  out->hi.clear();
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(utf8.data());
  const auto size = static_cast<utf8proc_ssize_t>(utf8.size());
  std::string normalized;
  auto flush = [&](size_t begin, size_t end) -> Status {  // the cluster [begin, end)
    const std::string_view cluster = utf8.substr(begin, end - begin);
    bool ascii = true;
    for (char c : cluster) ascii &= static_cast<unsigned char>(c) < 0x80;
    if (!ascii) STOKER_RETURN_IF_ERROR(NormalizeCluster(cluster, form, &normalized));
    if (ascii || normalized == cluster) {
      for (size_t b = begin; b < end; ++b) {
        out->lo.push_back(uint32_t(b));
        out->hi.push_back(uint32_t(b));
      }
      out->text += cluster;
      return Status::OK();
    }
    for (size_t b = 0; b < normalized.size(); ++b) {
      out->lo.push_back(uint32_t(begin));
      out->hi.push_back(uint32_t(b == 0 ? begin : end));
    }
    out->text += normalized;
    return Status::OK();
  };
  utf8proc_int32_t state = 0, prev = -1;
  size_t start = 0;
  for (utf8proc_ssize_t at = 0; at < size;) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(p + at, size - at, &cp);
    if (n <= 0) return InvalidArgument("normalization met invalid UTF-8");
    if (prev >= 0 && utf8proc_grapheme_break_stateful(prev, cp, &state)) {
      STOKER_RETURN_IF_ERROR(flush(start, size_t(at)));
      start = size_t(at);
    }
    prev = cp;
    at += n;
  }
  if (start < utf8.size()) STOKER_RETURN_IF_ERROR(flush(start, utf8.size()));
  out->lo.push_back(uint32_t(utf8.size()));
  out->hi.push_back(uint32_t(utf8.size()));
  return Status::OK();
}

}  // namespace stoker
