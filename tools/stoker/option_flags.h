// Flags from an option table (common/option_table.h): the row's CLI spelling, its doc as the
// help text, the struct's current value as the --help default, the row's validation. A bool row
// is a flag that sets the value other than the default (--seq-idx; --no-position-ids).
// Not thread-safe: used while one command line is set up.
#pragma once

#include <CLI/CLI.hpp>
#include <cctype>
#include <string>

#include "common/option_table.h"
#include "number_flags.h"

namespace stoker::cli {

// Registers `row` on `sub`, writing to *values; null when the row has no CLI spelling.
template <typename S>
CLI::Option* AddOptionFlag(CLI::App* sub, const OptionRow<S>& row, S* values) {
  if (row.cli.empty() || !row.set) return nullptr;
  const std::string flag(row.cli);
  const std::string doc(row.doc);
  if (row.kind == OptionKind::kBool) {
    const bool on = row.get(*values) == "true";
    const std::string to = on ? "false" : "true";
    std::string help = doc;
    if (on && !help.empty()) {
      help[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(help[0])));
      help = "Turn off: " + help;
    }
    return sub->add_flag_callback(
        flag, [&row, values, to] { (void)row.set(*values, to); }, help);
  }
  CLI::Option* opt = sub->add_option_function<std::string>(
      flag,
      [&row, values, flag](const std::string& text) {
        Status s = row.set(*values, text);
        if (!s.ok()) throw CLI::ValidationError(flag, s.message());
      },
      doc);
  opt->default_str(row.get(*values));
  if ((row.kind == OptionKind::kUnsigned || row.kind == OptionKind::kInt) && row.min >= 0) {
    opt->type_name("UINT");  // walked by cli_test.cc's number-flag checks
    opt->check(WholeNumber(static_cast<uint64_t>(row.min), row.max));
  } else if (row.kind == OptionKind::kCount) {
    opt->type_name("COUNT");  // "4M": the row's parser checks it
  } else if (row.kind == OptionKind::kChoice) {
    opt->check(CLI::IsMember(std::vector<std::string>(row.choices.begin(), row.choices.end())));
  }
  return opt;
}

}  // namespace stoker::cli
