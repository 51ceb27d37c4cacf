// Deprecated flag spellings: one spelling per idea on the command line (--num-workers,
// --on-error, ...), with the old spelling kept working beside it, listed apart in --help, and a
// warning on stderr when it is used. Not thread-safe: used while one command line is set up.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

namespace stoker::cli {

// Adds `old_name` as an option writing to `*value`, excluded with `current` (the one
// spelling), checked by `check` as the current one is, that warns "--old is deprecated; use --new".
template <typename T>
CLI::Option* AddDeprecatedAlias(CLI::App* sub, const std::string& old_name, CLI::Option* current,
                                T* value, const CLI::Validator& check) {
  const std::string now = current->get_name();
  CLI::Option* old = sub->add_option(old_name, *value, "Deprecated spelling of " + now);
  old->group("Deprecated spellings");  // not "": a hidden option's errors lose its name
  old->check(check);
  old->excludes(current);
  old->each([old_name, now](const std::string&) {
    std::fprintf(stderr, "stoker: warning: %s is deprecated; use %s\n", old_name.c_str(),
                 now.c_str());
  });
  return old;
}

}  // namespace stoker::cli
