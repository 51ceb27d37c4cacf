#include "records/tar_reader.h"

#include <algorithm>
#include <cstring>

#include "records/tar_block.h"

namespace stoker {
namespace {

uint64_t Padded(uint64_t n) { return (n + kTarBlock - 1) / kTarBlock * kTarBlock; }

// The bytes of a NUL-terminated header field.
std::string_view Nts(const char* p, size_t n) {
  const void* nul = std::memchr(p, '\0', n);
  return {p, nul ? static_cast<size_t>(static_cast<const char*>(nul) - p) : n};
}

// A numeric header field: octal digits (NUL/space terminated, space padded) or GNU base-256.
bool ParseNumber(const char* p, size_t n, int64_t* out) {
  auto b = reinterpret_cast<const uint8_t*>(p);
  if (b[0] == 0x80 || b[0] == 0xff) {
    // Base-256, big-endian, two's complement when the first byte is 0xff.
    uint64_t v = b[0] == 0xff ? ~uint64_t{0} : 0;
    for (size_t i = 1; i < n; ++i) {
      if (i < n - 8 && b[i] != (b[0] == 0xff ? 0xff : 0)) return false;  // > 64 bits
      v = (v << 8) | b[i];
    }
    *out = static_cast<int64_t>(v);
    return true;
  }
  std::string_view s = Nts(p, n);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '7') return false;
    if (v > (INT64_MAX >> 3)) return false;
    v = v * 8 + (c - '0');
  }
  *out = v;
  return true;
}

bool ChecksumMatches(const char* h) {
  int64_t stored;
  if (!ParseNumber(h + 148, 8, &stored)) return false;
  int64_t unsigned_sum = 8 * ' ', signed_sum = 8 * ' ';
  for (size_t i = 0; i < kTarBlock; ++i) {
    if (i >= 148 && i < 156) continue;
    unsigned_sum += static_cast<uint8_t>(h[i]);
    signed_sum += static_cast<int8_t>(h[i]);
  }
  return stored == unsigned_sum || stored == signed_sum;
}

bool IsRegular(char type) { return type == '0' || type == '\0' || type == '7'; }
// Types whose data tarfile does not skip: it assumes they have none (links, devices, dirs, FIFOs).
bool HasNoData(char type) { return type >= '1' && type <= '6'; }

}  // namespace

bool IsUnsafeMemberName(std::string_view name) {
  if (name.empty() || name.front() == '/') return true;
  size_t start = 0;
  while (start <= name.size()) {
    size_t slash = name.find('/', start);
    if (slash == std::string_view::npos) slash = name.size();
    if (name.substr(start, slash - start) == "..") return true;
    start = slash + 1;
  }
  return false;
}

TarReader::TarReader(std::unique_ptr<ByteStream> stream, std::string uri)
    : stream_(std::move(stream)), uri_(std::move(uri)) {}

Status TarReader::Corrupt(uint64_t offset, const std::string& what) const {
  return Corruption(uri_ + ": " + what + " at byte offset " + std::to_string(offset));
}

Status TarReader::ReadPadded(uint64_t n, std::string* out, const char* what) {
  uint64_t start = offset_;
  uint64_t total = Padded(n);
  // Grown as the data arrives (ReadUpTo), so a corrupt size field cannot allocate gigabytes.
  Status read = ReadUpTo(*stream_, n, out);
  offset_ += out->size();
  STOKER_RETURN_IF_ERROR(read);
  if (out->size() != n) {
    return Corrupt(start, std::string("truncated ") + what + " (" + std::to_string(n) +
                              " bytes expected, " + std::to_string(out->size()) + " present)");
  }
  char pad[kTarBlock];
  size_t pad_n = static_cast<size_t>(total - n);
  STOKER_ASSIGN_OR_RETURN(size_t pad_got, ReadFully(*stream_, pad, pad_n));
  offset_ += pad_got;
  if (pad_got != pad_n) return Corrupt(start, std::string("truncated padding of ") + what);
  return Status::OK();
}

Status TarReader::ParsePax(const std::string& data, uint64_t offset,
                           std::map<std::string, std::string>* records) const {
  size_t pos = 0;
  while (pos < data.size() && data[pos] != '\0') {
    size_t space = data.find(' ', pos);
    uint64_t len = 0;
    bool digits = space != std::string::npos && space > pos && space - pos <= 12;
    for (size_t i = pos; digits && i < space; ++i) {
      if (data[i] < '0' || data[i] > '9')
        digits = false;
      else
        len = len * 10 + static_cast<uint64_t>(data[i] - '0');
    }
    if (!digits || len <= space - pos + 1 || pos + len > data.size() ||
        data[pos + len - 1] != '\n') {
      return Corrupt(offset, "malformed pax record at position " + std::to_string(pos));
    }
    std::string_view record(data.data() + space + 1, pos + len - 1 - (space + 1));
    size_t eq = record.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return Corrupt(offset, "pax record without key=value at position " + std::to_string(pos));
    }
    (*records)[std::string(record.substr(0, eq))] = std::string(record.substr(eq + 1));
    pos += len;
  }
  return Status::OK();
}

Result<std::optional<TarMember>> TarReader::Next() {
  std::map<std::string, std::string> local_pax;
  std::optional<std::string> long_name;
  // Where the first header of the member being assembled (pax, long name) starts; kNoHeader
  // when none has been read yet.
  constexpr uint64_t kNoHeader = UINT64_MAX;
  uint64_t first_header = kNoHeader;
  while (!done_) {
    uint64_t header_offset = offset_;
    char h[kTarBlock];
    STOKER_ASSIGN_OR_RETURN(size_t got, ReadFully(*stream_, h, kTarBlock));
    offset_ += got;
    if (got == 0) {
      if (header_offset == 0) return Corrupt(0, "empty tar archive");
      if (first_header != kNoHeader)
        return Corrupt(first_header, "extended header without its member");
      done_ = true;  // the end of the data at a block boundary: tarfile ends here too
      break;
    }
    if (got < kTarBlock) {
      return Corrupt(header_offset,
                     "truncated tar header (" + std::to_string(got) + " of 512 bytes)");
    }
    if (std::all_of(h, h + kTarBlock, [](char c) { return c == '\0'; })) {
      if (first_header != kNoHeader)
        return Corrupt(first_header, "extended header without its member");
      done_ = true;
      break;
    }
    if (!ChecksumMatches(h)) return Corrupt(header_offset, "bad tar header checksum");
    if (first_header == kNoHeader) first_header = header_offset;
    char type = h[156];
    int64_t size_field;
    if (!ParseNumber(h + 124, 12, &size_field) || size_field < 0) {
      return Corrupt(header_offset, "bad size field in tar header");
    }
    uint64_t size = static_cast<uint64_t>(size_field);
    std::map<std::string, std::string> pax = global_pax_;
    for (auto& [k, v] : local_pax) pax[k] = v;
    if (type == 'x' || type == 'X' || type == 'g') {
      std::string data;
      STOKER_RETURN_IF_ERROR(ReadPadded(size, &data, "pax header"));
      STOKER_RETURN_IF_ERROR(
          ParsePax(data, header_offset, type == 'g' ? &global_pax_ : &local_pax));
      if (type == 'g') first_header = kNoHeader;
      continue;
    }
    if (type == 'L' || type == 'K') {
      std::string data;
      STOKER_RETURN_IF_ERROR(ReadPadded(size, &data, "GNU long name"));
      if (type == 'L') long_name = std::string(Nts(data.data(), data.size()));
      continue;
    }
    if (auto it = pax.find("size"); it != pax.end()) {
      int64_t v = 0;
      const std::string& s = it->second;
      if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos) {
        return Corrupt(header_offset, "bad pax size '" + s + "'");
      }
      for (char c : s) v = v * 10 + (c - '0');
      size = static_cast<uint64_t>(v);
    }
    std::string name(Nts(h, 100));
    bool posix = std::memcmp(h + 257, "ustar\0", 6) == 0;
    if (posix) {
      std::string_view prefix = Nts(h + 345, 155);
      if (!prefix.empty()) name = std::string(prefix) + "/" + name;
    }
    if (long_name) name = *long_name;
    if (auto it = pax.find("path"); it != pax.end()) name = it->second;
    if (type == '\0' && !name.empty() && name.back() == '/') type = '5';
    if (type == 'S') {
      return Corrupt(header_offset, "GNU sparse member '" + name + "' is not supported");
    }
    if (!IsRegular(type)) {
      if (!HasNoData(type)) {
        std::string skipped;
        STOKER_RETURN_IF_ERROR(ReadPadded(size, &skipped, "member data"));
      }
      local_pax.clear();
      long_name.reset();
      first_header = kNoHeader;
      continue;
    }
    if (IsUnsafeMemberName(name)) {
      return Corrupt(header_offset, "unsafe member name '" + name +
                                        "' (absolute, empty, or with a '..' component)");
    }
    TarMember member;
    member.name = std::move(name);
    member.header_offset = first_header;
    STOKER_RETURN_IF_ERROR(ReadPadded(size, &member.data, "member data"));
    return std::optional<TarMember>(std::move(member));
  }
  return std::optional<TarMember>();
}

}  // namespace stoker
