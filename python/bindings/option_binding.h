// Python from an option table (common/option_table.h): one attribute per row on the options class
// (typed by the row's kind, validated by the row on assignment), and the table itself as a list of
// dicts for `_stoker.option_table()`, from which stoker's Python builds and checks its keywords.
// Runs with the GIL held.
#pragma once

#include <nanobind/nanobind.h>

#include <deque>
#include <string>

#include "common/option_table.h"
#include "register.h"

namespace stoker::python {

// A row's text (OptionRow::get) as the Python value of its kind.
template <typename S>
nanobind::object OptionValue(const OptionRow<S>& row, const std::string& text) {
  namespace nb = nanobind;
  switch (row.kind) {
    case OptionKind::kBool:
      return nb::bool_(text == "true");
    case OptionKind::kInt:
      return nb::steal(PyLong_FromLongLong(std::stoll(text)));
    case OptionKind::kUnsigned:
    case OptionKind::kSize:
    case OptionKind::kCount:
      return nb::steal(PyLong_FromUnsignedLongLong(std::stoull(text)));
    default:
      return nb::str(text.c_str(), text.size());
  }
}

// A Python value as the row's text: a bool for kBool, an integer (anything with __index__ but a
// bool) for numbers (a size or count also as text, "200GiB", "4M", read by the row's parser), a str
// otherwise. TypeError for another type.
template <typename S>
std::string OptionText(const OptionRow<S>& row, nanobind::handle value) {
  namespace nb = nanobind;
  auto refuse = [&](const char* want) {
    throw nb::type_error((std::string(row.name) + " must be " + want + ", not " +
                          nb::type_name(value.type()).c_str())
                             .c_str());
  };
  switch (row.kind) {
    case OptionKind::kBool:
      if (!PyBool_Check(value.ptr())) refuse("a bool");
      return value.ptr() == Py_True ? "true" : "false";
    case OptionKind::kInt:
    case OptionKind::kUnsigned:
    case OptionKind::kSize:
    case OptionKind::kCount: {
      if ((row.kind == OptionKind::kSize || row.kind == OptionKind::kCount) &&
          PyUnicode_Check(value.ptr())) {
        return nb::cast<std::string>(value);
      }
      if (PyBool_Check(value.ptr())) refuse("an integer");
      PyObject* index = PyNumber_Index(value.ptr());
      if (index == nullptr) {
        PyErr_Clear();
        refuse("an integer");
      }
      return nb::str(nb::steal(index)).c_str();
    }
    default:
      if (!PyUnicode_Check(value.ptr())) refuse("a str");
      return nb::cast<std::string>(value);
  }
}

// The Python type of a row's attribute, for the .pyi stub.
inline const char* OptionPythonType(OptionKind kind, bool setter) {
  switch (kind) {
    case OptionKind::kBool:
      return "bool";
    case OptionKind::kInt:
    case OptionKind::kUnsigned:
      return "int";
    case OptionKind::kSize:
    case OptionKind::kCount:
      return setter ? "int | str" : "int";
    default:
      return "str";
  }
}

// Text that nanobind keeps pointers to (signatures): lives as long as the module.
inline const char* KeepText(std::string text) {
  static std::deque<std::string> kept;
  return kept.emplace_back(std::move(text)).c_str();
}

// One read-write attribute per row of `table` from `begin` on that has a text form (the rows of
// kind kOther are bound by hand, where they are bound at all), typed in the stub by its kind.
template <typename S, typename Class>
void BindOptionRows(Class& cls, const OptionTable<S>& table, size_t begin = 0) {
  namespace nb = nanobind;
  for (size_t i = begin; i < table.size(); ++i) {
    const OptionRow<S>& row = table[i];
    if (!row.get || !row.set) continue;
    const std::string name(row.name);
    cls.def_prop_rw(
        KeepText(name), [&row](const S& s) { return OptionValue(row, row.get(s)); },
        [&row](S& s, nb::handle value) { ThrowIfError(row.set(s, OptionText(row, value))); },
        nb::for_getter(
            nb::sig(KeepText("def " + name + "(self, /) -> " + OptionPythonType(row.kind, false)))),
        nb::for_setter(nb::sig(KeepText(
            "def " + name + "(self, arg: " + OptionPythonType(row.kind, true) + ", /) -> None"))),
        nb::for_getter(KeepText(std::string(row.doc))));
  }
}

// The table as Python sees it: one dict per row with name, python (the keyword, or None),
// python_part ((tuple keyword, position, optional) or None), cli (the flag, or None), kind, doc,
// default (the value of a default-constructed S, None for kOther), choices and min.
template <typename S>
nanobind::list OptionTableList(const OptionTable<S>& table) {
  namespace nb = nanobind;
  const S defaults{};
  nb::list out;
  for (const OptionRow<S>& row : table) {
    nb::dict d;
    d["name"] = nb::str(row.name.data(), row.name.size());
    const std::string_view python = row.python_name();
    d["python"] = row.in_python() ? nb::object(nb::str(python.data(), python.size())) : nb::none();
    // A part of a tuple keyword: (keyword, position, optional), else None.
    d["python_part"] =
        row.python_tuple.empty()
            ? nb::object(nb::none())
            : nb::object(nb::make_tuple(nb::str(row.python_tuple.data(), row.python_tuple.size()),
                                        row.python_index, row.python_optional));
    d["cli"] = row.cli.empty() ? nb::object(nb::none())
                               : nb::object(nb::str(row.cli.data(), row.cli.size()));
    const std::string_view kind = OptionKindName(row.kind);
    d["kind"] = nb::str(kind.data(), kind.size());
    d["doc"] = nb::str(row.doc.data(), row.doc.size());
    d["default"] = row.get ? OptionValue(row, row.get(defaults)) : nb::none();
    nb::list choices;
    for (std::string_view c : row.choices) choices.append(nb::str(c.data(), c.size()));
    d["choices"] = choices;
    d["min"] = row.min;
    out.append(d);
  }
  return out;
}

}  // namespace stoker::python
