#include "records/tar_writer.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "records/tar_block.h"

namespace stoker {
namespace {

constexpr uint64_t kRecordBytes = 20 * kTarBlock;

void PutOctal(char* field, size_t width, uint64_t v) {
  // width - 1 digits and a NUL, like tarfile's itn().
  std::snprintf(field, width, "%0*llo", static_cast<int>(width - 1),
                static_cast<unsigned long long>(v));
}

bool FitsUstarName(std::string_view name) {
  return name.size() <= 100 && std::ranges::all_of(name, [](unsigned char c) { return c < 0x80; });
}

std::string PaxRecord(std::string_view key, std::string_view value) {
  // "<len> key=value\n", where len counts its own digits.
  size_t body = key.size() + value.size() + 3;  // ' ', '=', '\n'
  size_t len = body + 1;
  while (std::to_string(len).size() + body != len) ++len;
  return std::to_string(len) + " " + std::string(key) + "=" + std::string(value) + "\n";
}

}  // namespace

std::string TarHeaderBlock(std::string_view name, uint64_t size, char typeflag, uint64_t mtime) {
  std::string h(kTarBlock, '\0');
  std::memcpy(h.data(), name.data(), std::min<size_t>(name.size(), 100));
  PutOctal(&h[100], 8, 0444);
  PutOctal(&h[108], 8, 0);
  PutOctal(&h[116], 8, 0);
  PutOctal(&h[124], 12, size);
  PutOctal(&h[136], 12, mtime);
  h[156] = typeflag;
  std::memcpy(&h[257],
              "ustar\0"
              "00",
              8);
  std::memcpy(&h[265], "bigdata", 7);
  std::memcpy(&h[297], "bigdata", 7);
  PutOctal(&h[329], 8, 0);
  PutOctal(&h[337], 8, 0);
  std::memset(&h[148], ' ', 8);
  unsigned sum = 0;
  for (char c : h) sum += static_cast<unsigned char>(c);
  std::snprintf(&h[148], 7, "%06o", sum);  // six digits, NUL, and the space stays
  return h;
}

std::string TarMemberHeader(std::string_view name, uint64_t size, uint64_t mtime) {
  std::string out;
  bool big = size > 077777777777ull;
  if (!FitsUstarName(name) || big) {
    std::string pax;
    if (!FitsUstarName(name)) pax += PaxRecord("path", name);
    if (big) pax += PaxRecord("size", std::to_string(size));
    out += TarHeaderBlock("././@PaxHeader", pax.size(), 'x', mtime);
    out += pax;
    out += TarPadding(pax.size());
  }
  // tarfile stores what fits of the name (ASCII-replaced) in the ustar field; the pax path wins.
  std::string short_name(name.substr(0, std::min<size_t>(name.size(), 100)));
  for (char& c : short_name) {
    if (static_cast<unsigned char>(c) >= 0x80) c = '?';
  }
  out += TarHeaderBlock(short_name, big ? 0 : size, '0', mtime);
  return out;
}

std::string TarPadding(uint64_t size) {
  return std::string(static_cast<size_t>((kTarBlock - size % kTarBlock) % kTarBlock), '\0');
}

std::string TarEnd(uint64_t archive_bytes) {
  uint64_t total = archive_bytes + 2 * kTarBlock;
  uint64_t padded = (total + kRecordBytes - 1) / kRecordBytes * kRecordBytes;
  return std::string(static_cast<size_t>(padded - archive_bytes), '\0');
}

}  // namespace stoker
