#include "records/runpath.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <system_error>

#include "common/file_util.h"

namespace stoker {
namespace {

std::string ExpandOrigin(std::string dir, const std::string& origin) {
  for (std::string_view token : {"${ORIGIN}", "$ORIGIN"}) {
    for (size_t at = dir.find(token); at != std::string::npos; at = dir.find(token, at)) {
      dir.replace(at, token.size(), origin);
      at += origin.size();
    }
  }
  return dir;
}

}  // namespace

std::vector<std::string> RunpathDirs(const void* address) {
  Dl_info info;
  struct link_map* map = nullptr;
  if (::dladdr1(address, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) == 0 ||
      map == nullptr || map->l_ld == nullptr) {
    return {};
  }
  uintptr_t strtab = 0;
  const ElfW(Dyn)* runpath = nullptr;
  const ElfW(Dyn)* rpath = nullptr;
  for (const ElfW(Dyn)* d = map->l_ld; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_STRTAB) strtab = d->d_un.d_ptr;
    if (d->d_tag == DT_RUNPATH) runpath = d;
    if (d->d_tag == DT_RPATH) rpath = d;
  }
  const ElfW(Dyn)* entry = runpath != nullptr ? runpath : rpath;
  if (entry == nullptr || strtab == 0) return {};
  // glibc relocates DT_STRTAB in the mapped dynamic section; where it has not (a read-only
  // dynamic section), the value is still the link-time address.
  if (strtab < map->l_addr) strtab += map->l_addr;
  const std::string list(reinterpret_cast<const char*>(strtab) + entry->d_un.d_val);
  // $ORIGIN: the object's directory; the main program's l_name is empty (and dladdr's name is
  // argv[0], which may be relative), so its path comes from /proc/self/exe.
  std::string path = map->l_name != nullptr ? map->l_name : "";
  if (path.empty()) {
    std::error_code ec;
    path = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  }
  const std::string origin = DirName(path);
  std::vector<std::string> dirs;
  size_t begin = 0;
  while (begin <= list.size()) {
    size_t end = list.find(':', begin);
    if (end == std::string::npos) end = list.size();
    if (end > begin) dirs.push_back(ExpandOrigin(list.substr(begin, end - begin), origin));
    begin = end + 1;
  }
  return dirs;
}

}  // namespace stoker
