// Option tables: every options struct (PlanOptions, LoaderOptions, StreamOptions, TokenizerOptions,
// PackArgs) declares each of its fields once, as a row — name, kind, one-line doc, CLI spelling,
// Python keyword, and how the value reads and writes as text (with its validation) — and every
// surface is derived from the rows: the CLI flags and their --help (tools/stoker/option_flags.h),
// the Python attributes and `_stoker.option_table()` (python/bindings/register_options.cc), and
// the one-line descriptions of a run. A test (tests/python/test_py_option_table.py) checks that
// every member of each struct has a row and that every surface a row names has it, with the same
// default. After Arrow's compute FunctionOptions, whose property table per options type drives
// equality, serialization and the Python wrappers. Thread-safe: tables are immutable once built.
#pragma once

#include <charconv>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "stoker/status.h"

namespace stoker {

enum class OptionKind : uint8_t {
  kBool,      // "true" / "false"; on the CLI a flag that sets the other value than the default
  kInt,       // a signed whole number >= min
  kUnsigned,  // a whole number >= min
  kText,      // any string
  kChoice,    // one of `choices`
  kSize,      // bytes; read as "200GiB", "500M", "4096" (ParseSize); 0 = the stated default
  kCount,     // a whole number also read as "4M", "2T" (powers of 1000: the row's parser)
  kOther,     // no text form (a list, a callback, a nested struct): C++ (and its own binding) only
};

// "bool", "int", "unsigned", "text", "choice", "size", "count", "other".
std::string_view OptionKindName(OptionKind kind);

// Text to values, with the message every surface shows ("seq_len: must be a whole number >= 1,
// got 'abc'"). Ranges are inclusive.
Result<bool> ParseOptionBool(std::string_view name, std::string_view text);
Result<uint64_t> ParseOptionUnsigned(std::string_view name, std::string_view text, uint64_t min,
                                     uint64_t max);
Result<int64_t> ParseOptionInt(std::string_view name, std::string_view text, int64_t min,
                               int64_t max);

// One option of the options struct S.
template <typename S>
struct OptionRow {
  std::string_view name;  // the C++ field; also the Python keyword unless `python` is set
  OptionKind kind = OptionKind::kOther;
  std::string_view doc;     // one line
  std::string_view cli;     // "--seq-len"; empty: not on the command line
  std::string_view python;  // the Python keyword when it differs from `name`; "-": none
  std::vector<std::string_view> choices;            // kChoice: the accepted names
  int64_t min = 0;                                  // kInt / kUnsigned: the least value
  uint64_t max = UINT64_MAX;                        // kInt / kUnsigned: the largest
  std::function<std::string(const S&)> get;         // the value as text (empty for kOther)
  std::function<Status(S&, std::string_view)> set;  // validates, then sets (empty for kOther)
  // A Python keyword that is a tuple of several rows (context_parallel=(cp_size, cp_rank)): its
  // name, this row's position in it, and whether the tuple may end before it (the row then keeps
  // its default). Empty: none (the row's own keyword is `python`).
  std::string_view python_tuple;
  int python_index = -1;
  bool python_optional = false;
  // Whether the row is in the options text a state keeps (OptionsText) for these values: set on
  // the rows that shape a plan's rows; empty: never.
  std::function<bool(const S&)> in_state;

  std::string_view python_name() const { return python.empty() ? name : python; }
  bool in_python() const { return python != "-"; }
  OptionRow Cli(std::string_view flag) && {
    cli = flag;
    return std::move(*this);
  }
  OptionRow Py(std::string_view keyword) && {
    python = keyword;
    return std::move(*this);
  }
  // Part `index` of the tuple keyword `keyword` in Python, instead of a keyword of its own.
  OptionRow PyPart(std::string_view keyword, int index, bool optional = false) && {
    python = "-";
    python_tuple = keyword;
    python_index = index;
    python_optional = optional;
    return std::move(*this);
  }
  // In a state's options text always, or while `when(values)` holds (block_shards: only with
  // shuffle=block).
  OptionRow InState(std::function<bool(const S&)> when = [](const S&) { return true; }) && {
    in_state = std::move(when);
    return std::move(*this);
  }
};

template <typename S>
using OptionTable = std::vector<OptionRow<S>>;

namespace option_detail {
template <typename S, typename M>
using MemberOf = std::remove_cvref_t<decltype(std::declval<S&>().*std::declval<M>())>;

template <typename S>
OptionRow<S> Row(std::string_view name, OptionKind kind, std::string_view doc) {
  OptionRow<S> r;
  r.name = name;
  r.kind = kind;
  r.doc = doc;
  return r;
}
}  // namespace option_detail

// Rows over a data member `field` of S (or of a base of S).
template <typename S, typename M>
OptionRow<S> BoolOption(std::string_view name, std::string_view doc, M field) {
  OptionRow<S> r = option_detail::Row<S>(name, OptionKind::kBool, doc);
  r.get = [field](const S& s) { return std::string(s.*field ? "true" : "false"); };
  r.set = [field, name](S& s, std::string_view text) -> Status {
    STOKER_ASSIGN_OR_RETURN(s.*field, ParseOptionBool(name, text));
    return Status::OK();
  };
  return r;
}

// A whole number of the field's own type, at least `min` (negative `min`: a signed field).
template <typename S, typename M>
OptionRow<S> WholeOption(std::string_view name, std::string_view doc, M field, int64_t min = 0) {
  using T = option_detail::MemberOf<S, M>;
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  OptionRow<S> r = option_detail::Row<S>(
      name, std::is_signed_v<T> ? OptionKind::kInt : OptionKind::kUnsigned, doc);
  r.min = min;
  r.max = static_cast<uint64_t>(std::numeric_limits<T>::max());
  r.get = [field](const S& s) { return std::to_string(s.*field); };
  r.set = [field, name, min](S& s, std::string_view text) -> Status {
    if constexpr (std::is_signed_v<T>) {
      STOKER_ASSIGN_OR_RETURN(int64_t v,
                              ParseOptionInt(name, text, min, std::numeric_limits<T>::max()));
      s.*field = static_cast<T>(v);
    } else {
      STOKER_ASSIGN_OR_RETURN(uint64_t v,
                              ParseOptionUnsigned(name, text, min, std::numeric_limits<T>::max()));
      s.*field = static_cast<T>(v);
    }
    return Status::OK();
  };
  return r;
}

template <typename S, typename M>
OptionRow<S> TextOption(std::string_view name, std::string_view doc, M field) {
  OptionRow<S> r = option_detail::Row<S>(name, OptionKind::kText, doc);
  r.get = [field](const S& s) { return std::string(s.*field); };
  r.set = [field](S& s, std::string_view text) {
    s.*field = std::string(text);
    return Status::OK();
  };
  return r;
}

// An enum field read and written by name: `to_name(value)` and `parse(text)` (a Result).
template <typename S, typename M, typename ToName, typename Parse>
OptionRow<S> ChoiceOption(std::string_view name, std::string_view doc, M field,
                          std::vector<std::string_view> choices, ToName to_name, Parse parse) {
  OptionRow<S> r = option_detail::Row<S>(name, OptionKind::kChoice, doc);
  r.choices = std::move(choices);
  r.get = [field, to_name](const S& s) { return std::string(to_name(s.*field)); };
  r.set = [field, parse, name](S& s, std::string_view text) -> Status {
    auto v = parse(text);
    if (!v.ok()) return v.status().WithContext(name);
    s.*field = *v;
    return Status::OK();
  };
  return r;
}

// A text field whose value is one of `choices` (PackArgs keeps its enums as text).
template <typename S, typename M>
OptionRow<S> ChoiceTextOption(std::string_view name, std::string_view doc, M field,
                              std::vector<std::string_view> choices) {
  OptionRow<S> r = TextOption<S>(name, doc, field);
  r.kind = OptionKind::kChoice;
  r.choices = choices;
  r.set = [field, name, choices](S& s, std::string_view text) -> Status {
    for (std::string_view c : choices) {
      if (c == text) {
        s.*field = std::string(text);
        return Status::OK();
      }
    }
    std::string want;
    for (std::string_view c : choices) want += (want.empty() ? "'" : ", '") + std::string(c) + "'";
    return InvalidArgument(std::string(name) + ": must be one of " + want + ", got '" +
                           std::string(text) + "'");
  };
  return r;
}

// A byte count read by `parse` (ParseSize, or a stricter parser such as the cache's); with kind
// kCount, a count read by `parse` ("4M" tokens: plan::ParseCount).
template <typename S, typename M, typename Parse>
OptionRow<S> SizeOption(std::string_view name, std::string_view doc, M field, Parse parse,
                        OptionKind kind = OptionKind::kSize) {
  OptionRow<S> r = option_detail::Row<S>(name, kind, doc);
  r.get = [field](const S& s) { return std::to_string(s.*field); };
  r.set = [field, parse](S& s, std::string_view text) -> Status {
    STOKER_ASSIGN_OR_RETURN(s.*field, parse(text));
    return Status::OK();
  };
  return r;
}

// A field with no text form (kOther): listed, so that the table is the list of the struct's
// members, and bound by hand where it is bound at all.
template <typename S>
OptionRow<S> OtherOption(std::string_view name, std::string_view doc) {
  return option_detail::Row<S>(name, OptionKind::kOther, doc);
}

// The rows of a base struct's table as rows of Derived (LoaderOptions is a PlanOptions).
template <typename Derived, typename Base>
OptionTable<Derived> RebaseOptions(const OptionTable<Base>& rows) {
  static_assert(std::is_base_of_v<Base, Derived>);
  OptionTable<Derived> out;
  for (const OptionRow<Base>& b : rows) {
    OptionRow<Derived> d = option_detail::Row<Derived>(b.name, b.kind, b.doc);
    d.cli = b.cli;
    d.python = b.python;
    d.python_tuple = b.python_tuple;
    d.python_index = b.python_index;
    d.python_optional = b.python_optional;
    d.choices = b.choices;
    d.min = b.min;
    d.max = b.max;
    if (b.get) d.get = [get = b.get](const Derived& s) { return get(s); };
    if (b.set) d.set = [set = b.set](Derived& s, std::string_view t) { return set(s, t); };
    if (b.in_state) d.in_state = [in = b.in_state](const Derived& s) { return in(s); };
    out.push_back(std::move(d));
  }
  return out;
}

template <typename S>
const OptionRow<S>* FindOption(const OptionTable<S>& table, std::string_view name) {
  for (const OptionRow<S>& r : table) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

// " --seq-len 2048 --batch-size 8 ..." for the rows named in `names`, in that order (rows without
// a CLI spelling or a text form are left out), as a command line would give `values`.
template <typename S>
std::string DescribeOptions(const OptionTable<S>& table, const S& values,
                            const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view n : names) {
    const OptionRow<S>* r = FindOption(table, n);
    if (r == nullptr || r->cli.empty() || !r->get) continue;
    out += " " + std::string(r->cli) + " " + r->get(values);
  }
  return out;
}

// "seq_len=2048 seed=0 shuffle=global pack=concat": name=value, in the table's order, of each
// row in the state for `values` (OptionRow::in_state), or with `names` of those rows, in that
// order: the options a PlanState keeps in clear, which a refused resume names by key
// (plan/options_text.h). Values are the rows' text, which has no spaces for these rows.
template <typename S>
std::string OptionsText(const OptionTable<S>& table, const S& values,
                        const std::vector<std::string_view>& names = {}) {
  std::string out;
  auto add = [&](const OptionRow<S>& r) {
    if (r.get) out += (out.empty() ? "" : " ") + std::string(r.name) + "=" + r.get(values);
  };
  if (names.empty()) {
    for (const OptionRow<S>& r : table) {
      if (r.in_state && r.in_state(values)) add(r);
    }
  }
  for (std::string_view n : names) {
    if (const OptionRow<S>* r = FindOption(table, n)) add(*r);
  }
  return out;
}

}  // namespace stoker
