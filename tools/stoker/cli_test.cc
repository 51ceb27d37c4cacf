// Walks every option of every subcommand: each number flag says what it wants, in words, for a
// value that is not a number, a negative one and one too large for its type.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "app.h"

namespace stoker::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

struct NumberFlag {
  std::string command;
  std::string flag;
  std::string type;  // CLI11's type name: INT, UINT or FLOAT
};

bool IsNumberType(const std::string& type_name) {
  for (const char* t : {"INT", "UINT", "FLOAT"}) {
    const std::string prefix = t;
    if (type_name == prefix || type_name.rfind(prefix + ":", 0) == 0) return true;
  }
  return false;
}

// Every number flag of `app`'s subcommands, nested ones ("storage cat") included.
void CollectNumberFlags(CLI::App* app, const std::string& path, std::vector<NumberFlag>* flags) {
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    const std::string command = path.empty() ? sub->get_name() : path + " " + sub->get_name();
    for (const CLI::Option* opt : sub->get_options()) {
      if (opt->get_type_size() == 0 || opt->get_lnames().empty()) continue;  // flags, positionals
      const std::string type = opt->get_type_name();
      if (!IsNumberType(type)) continue;
      flags->push_back({command, "--" + opt->get_lnames()[0], type.substr(0, type.find(':'))});
    }
    CollectNumberFlags(sub, command, flags);
  }
}

std::vector<NumberFlag> AllNumberFlags() {
  CLI::App app;
  int exit_code = 0;
  AddAllCommands(app, &exit_code);
  std::vector<NumberFlag> flags;
  CollectNumberFlags(&app, "", &flags);
  return flags;
}

// The message CLI11 raises when `command flag value` is parsed; "" when it parses.
std::string ParseError(const std::string& command, const std::string& flag,
                       const std::string& value) {
  CLI::App app;
  int exit_code = 0;
  AddAllCommands(app, &exit_code);
  // Parse only, run nothing: the app's parse-complete callback runs before any subcommand's, and
  // throwing from it stops there. (Replacing the subcommands' callbacks would free the argument
  // structs they own while the options still point into them.)
  struct Parsed {};
  app.parse_complete_callback([] { throw Parsed{}; });
  std::vector<std::string> args = {value, flag};  // CLI11 takes them reversed
  std::istringstream words(command);
  std::vector<std::string> path;
  for (std::string w; words >> w;) path.push_back(w);
  args.insert(args.end(), path.rbegin(), path.rend());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return e.what();
  } catch (const Parsed&) {
  }
  return "";
}

TEST(CliNumberFlags, EverySubcommandHasNumberFlagsToWalk) {
  std::vector<NumberFlag> flags = AllNumberFlags();
  std::vector<std::string> commands;
  for (const NumberFlag& f : flags) {
    if (commands.empty() || commands.back() != f.command) commands.push_back(f.command);
  }
  // These all take numbers; the walk must find them, nested subcommands included.
  for (const char* c : {"pack", "inspect", "plan", "bench", "doctor", "records", "storage cat"}) {
    EXPECT_NE(std::find(commands.begin(), commands.end(), c), commands.end()) << c;
  }
  EXPECT_GE(flags.size(), 30u);
}

TEST(CliNumberFlags, EveryNumberFlagSaysWhatItWants) {
  for (const NumberFlag& f : AllNumberFlags()) {
    SCOPED_TRACE(f.command + " " + f.flag);
    const std::string kind = f.type == "FLOAT" ? "must be a number " : "must be a whole number ";
    for (const std::string bad : {"abc", "-5", "1x", ""}) {
      const std::string error = ParseError(f.command, f.flag, bad);
      EXPECT_THAT(error, StartsWith(f.flag + ": " + kind)) << "value '" << bad << "'";
      EXPECT_THAT(error, HasSubstr(", got '" + bad + "'"));
      EXPECT_THAT(error, Not(HasSubstr("179769313486231570814527")));
    }
    if (f.type != "FLOAT") {
      // One past what a uint64 holds: never wraps around, never a conversion message.
      const std::string error = ParseError(f.command, f.flag, "18446744073709551616");
      EXPECT_THAT(error, StartsWith(f.flag + ": " + kind));
    }
  }
}

TEST(CliNumberFlags, SeqLenSaysWholeNumberAtLeastOne) {
  EXPECT_EQ(ParseError("plan", "--seq-len", "abc"),
            "--seq-len: must be a whole number ≥ 1, got 'abc'");
  EXPECT_EQ(ParseError("plan", "--seq-len", "0"), "--seq-len: must be a whole number ≥ 1, got '0'");
  EXPECT_EQ(ParseError("bench", "--seq-len", "0"),
            "--seq-len: must be a whole number ≥ 1, got '0'");
}

TEST(CliNumberFlags, RangesFollowTheFlagsType) {
  EXPECT_EQ(ParseError("plan", "--world-size", "4294967296"),
            "--world-size: must be a whole number ≥ 1 and ≤ 4294967295, got '4294967296'");
  EXPECT_EQ(ParseError("doctor", "--mfu", "1.5"), "--mfu: must be a number > 0 and ≤ 1, got '1.5'");
  EXPECT_EQ(ParseError("bench", "--seconds", "0"), "--seconds: must be a number > 0, got '0'");
  EXPECT_EQ(ParseError("bench", "--consumer-step-ms", "nan"),
            "--consumer-step-ms: must be a number ≥ 0, got 'nan'");
}

TEST(CliNumberFlags, GoodValuesParse) {
  // The parse stops at the missing positional or required flags, not at the number.
  EXPECT_THAT(ParseError("plan", "--seq-len", "2048"), Not(HasSubstr("--seq-len")));
  EXPECT_THAT(ParseError("doctor", "--mfu", "0.4"), Not(HasSubstr("--mfu")));
  EXPECT_THAT(ParseError("bench", "--workers", "0"), Not(HasSubstr("--workers")));
}

}  // namespace
}  // namespace stoker::cli
