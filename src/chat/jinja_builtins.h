// The built-ins of the Jinja subset: filters, tests, attribute and item access, and the methods of
// str, dict and list that chat templates call, each with the semantics of jinja2 (3.1) and Python
// as transformers runs them (its tojson filter: json.dumps without HTML escaping). Errors carry no
// position; the renderer adds the template and line. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "chat/jinja_value.h"
#include "stoker/status.h"

namespace stoker::jinja {

bool IsKnownFilter(std::string_view name);
bool IsKnownTest(std::string_view name);

Result<Value> ApplyFilter(const std::string& name, const Value& v, const ValueList& args,
                          const Kwargs& kwargs);
Result<bool> ApplyTest(const std::string& name, const Value& v, const ValueList& args);

// jinja2's getattr: a dict's key (Undefined when absent); an error on Undefined.
Result<Value> GetAttr(const Value& obj, const std::string& name);
// jinja2's getitem: obj[key] for dicts, lists and strings (negative indices count from the end);
// Undefined when absent; an error on Undefined.
Result<Value> GetItem(const Value& obj, const Value& key);
// obj[start:stop:step] for lists and strings (null parts: Undefined or None).
Result<Value> GetSlice(const Value& obj, const Value& start, const Value& stop, const Value& step);
// obj.name(args...) when obj is a str, dict or list with a method of that name; nullopt when it
// has none.
std::optional<Result<Value>> CallMethod(const Value& obj, const std::string& name,
                                        const ValueList& args, const Kwargs& kwargs);
// Whether obj.name is one of the methods CallMethod implements (read without a call: an error).
bool IsMethod(const Value& obj, std::string_view name);
// The items a for loop visits: a list's items, a dict's keys, a string's characters; none for
// Undefined; an error for other values.
Result<ValueList> Iterate(const Value& v);
// Python's + - * / // % ** on numbers, strings and lists.
Result<Value> Arithmetic(const std::string& op, const Value& a, const Value& b);
// Python's `a in b`.
Result<bool> Contains(const Value& container, const Value& item);

}  // namespace stoker::jinja
