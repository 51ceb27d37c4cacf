// The values a chat template computes with: Python's None, bool, int, float, str, list, tuple
// and dict (insertion-ordered, string keys), plus Jinja's Undefined, namespaces and callables.
// Lists and dicts are shared (copying a Value copies a pointer), as in Python; only a namespace
// is ever changed after it is built. Text is UTF-8; lengths, indices and slices of strings count
// code points, as Python does. Not thread-safe: one render at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stoker/status.h"

namespace stoker::jinja {

// Watches a render for reads of the watched code points U+E000..U+E003 (ChatTemplate's span
// markers): while a ReadWatch lives on a thread, each read of a string's characters there (a
// comparison, a length, a slice, a method or filter, tojson, repr...) that holds one of them is
// seen. Passing a string on whole is not a read: writing it out, `+` and `~` of strings, its
// truthiness, copies into variables, lists and calls. So a render that saw none treated the
// watched strings as opaque: with their markers removed, its output is the one without them.
class ReadWatch {
 public:
  ReadWatch() : previous_(current_) { current_ = this; }
  ~ReadWatch() { current_ = previous_; }
  ReadWatch(const ReadWatch&) = delete;
  ReadWatch& operator=(const ReadWatch&) = delete;

  bool seen() const { return seen_; }
  // Called on each read; one thread-local load when no watch is alive.
  static void Note(const std::string& s) {
    if (current_ != nullptr) [[unlikely]]
      current_->Check(s);
  }

 private:
  void Check(const std::string& s);

  static constinit thread_local ReadWatch* current_;
  ReadWatch* previous_;
  bool seen_ = false;
};

// Whether s holds one of the span markers U+E000..U+E003.
bool HasSpanMarker(std::string_view s);

class Value;
using ValueList = std::vector<Value>;
using Kwargs = std::vector<std::pair<std::string, Value>>;

struct Dict {
  std::vector<std::pair<std::string, Value>> items;
  const Value* Find(std::string_view key) const;
  void Set(const std::string& key, Value v);
};

// A function the template can call: a built-in (raise_exception, range, ...) or a macro.
using Function = std::function<Result<Value>(ValueList args, Kwargs kwargs)>;

class Value {
 public:
  // kBigInt: an integer of the data past int64 (JSON's 2**63 .. 2**64-1), which prints, compares
  // and serializes as Python's int does; arithmetic on it is an error, never a wrapped number.
  enum class Kind {
    kUndefined,
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kList,
    kDict,
    kFunction,
    kBigInt
  };

  Value() = default;  // Undefined
  static Value None();
  static Value Bool(bool b);
  static Value Int(int64_t i);
  static Value BigInt(uint64_t u);  // u > INT64_MAX (kBigInt); smaller: Int
  static Value Float(double f);
  static Value String(std::string s);
  static Value List(ValueList items, bool tuple = false);
  static Value MakeDict(Dict d, bool is_namespace = false);
  static Value Func(std::string name, Function f);
  // JSON (object keys in their order) to a Value: null, bool, numbers, strings, arrays, objects.
  static Value FromJson(const nlohmann::ordered_json& j);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_dict() const { return kind_ == Kind::kDict; }
  bool is_function() const { return kind_ == Kind::kFunction; }
  // int or bool (Python's bool is an int) or float.
  bool is_number() const {
    return kind_ == Kind::kInt || kind_ == Kind::kBool || kind_ == Kind::kFloat;
  }
  bool is_big_int() const { return kind_ == Kind::kBigInt; }
  // Python's isinstance(x, int) without bool: int or a big int.
  bool is_integer() const { return kind_ == Kind::kInt || kind_ == Kind::kBigInt; }
  uint64_t big_int_value() const { return uint64_t(i_); }
  bool is_tuple() const { return tuple_; }
  // How deep lists and dicts nest in this value (1: none); bounded by kMaxNesting.
  int nesting() const { return nesting_; }
  bool is_namespace() const { return namespace_; }

  bool bool_value() const { return b_; }
  int64_t int_value() const { return kind_ == Kind::kBool ? (b_ ? 1 : 0) : i_; }
  double float_value() const { return kind_ == Kind::kFloat ? f_ : double(int_value()); }
  // The string, or the function's name: a read of its characters (ReadWatch).
  const std::string& str() const {
    ReadWatch::Note(s_);
    return s_;
  }
  // The string passed on whole (written out, concatenated): not a read for ReadWatch.
  const std::string& whole_str() const { return s_; }
  const ValueList& list() const { return *list_; }
  const Dict& dict() const { return *dict_; }
  Dict& mutable_dict() const { return *dict_; }  // namespaces only
  const Function& function() const { return *fn_; }

  // Python's bool(x); Undefined is false.
  bool Truthy() const;
  // Python's str(x): "None", "True", repr of floats, lists and dicts as Python prints them;
  // Undefined is "".
  std::string Str() const;
  // Python's repr(x).
  std::string Repr() const;
  // Python's len() for strings (code points), lists and dicts; Undefined is 0. Others: -1.
  int64_t Length() const;
  // The value as transformers' tojson filter writes it: json.dumps(x, ensure_ascii, indent,
  // separators, sort_keys). indent < 0: none; indent_str used when given as a string.
  Status AppendJson(std::string* out, bool ensure_ascii, const std::string* indent,
                    const std::string& item_sep, const std::string& key_sep, bool sort_keys,
                    int depth) const;
  const char* TypeName() const;

 private:
  explicit Value(Kind k) : kind_(k) {}

  Kind kind_ = Kind::kUndefined;
  bool b_ = false;
  bool tuple_ = false;
  bool namespace_ = false;
  int nesting_ = 1;
  int64_t i_ = 0;
  double f_ = 0;
  std::string s_;
  std::shared_ptr<ValueList> list_;
  std::shared_ptr<Dict> dict_;
  std::shared_ptr<Function> fn_;
};

// The largest string (bytes) or list (items) a template may build, and how deeply its lists and
// dicts may nest (Python's repr, == and json.dumps recurse, and so do these): past one, the
// rendering is an error (CheckValueSize), not a crash.
inline constexpr size_t kMaxValueSize = size_t(256) << 20;
inline constexpr int kMaxNesting = 1000;
// An error naming the bound when `v` passes kMaxValueSize or kMaxNesting.
Status CheckValueSize(const Value& v);
// An error when a string or list of `n` bytes or items would pass kMaxValueSize.
Status CheckBuildSize(uint64_t n);

// Python's ==.
bool Equal(const Value& a, const Value& b);
// Python's <, > ...: -1, 0 or 1; an error for types Python cannot order.
Result<int> Compare(const Value& a, const Value& b);

// Python's float repr: "1.0", "0.1", "1e-05", "1e+16".
std::string FloatRepr(double f);
// Python's str.isspace() for one code point.
bool IsPySpace(char32_t cp);
// Decodes valid UTF-8 into code points (the text was validated when it entered).
std::u32string ToU32(std::string_view s);
std::string FromU32(std::u32string_view s);

}  // namespace stoker::jinja
