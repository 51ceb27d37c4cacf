#include "format/npy_header.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "common/load.h"
#include "format/megatron_index.h"

namespace stoker {
namespace {

constexpr char kNpyMagic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

// A small recursive-descent reader for the Python dict literal of a .npy header. It understands
// exactly: 'str' / "str", True, False, ints, tuples of ints; anything else is refused. `base` is
// the file offset of the text, so errors can point at the byte.
class DictParser {
 public:
  DictParser(std::string_view text, uint64_t base, const std::string& path)
      : text_(text), base_(base), path_(path) {}

  Status Parse(NpyHeader* h) {
    bool have_descr = false, have_order = false, have_shape = false;
    std::string descr;
    uint64_t descr_at = 0;
    STOKER_RETURN_IF_ERROR(Expect('{'));
    for (;;) {
      SkipSpace();
      if (Peek() == '}') break;
      std::string key;
      STOKER_RETURN_IF_ERROR(String(&key));
      STOKER_RETURN_IF_ERROR(Expect(':'));
      SkipSpace();
      if (key == "descr") {
        descr_at = pos_;
        if (Peek() == '[') return Error("structured dtypes (a list of fields) are not token data");
        if (Peek() == '(') return Error("subarray dtypes are not token data");
        STOKER_RETURN_IF_ERROR(String(&descr));
        have_descr = true;
      } else if (key == "fortran_order") {
        STOKER_RETURN_IF_ERROR(Bool(&h->fortran_order));
        have_order = true;
      } else if (key == "shape") {
        STOKER_RETURN_IF_ERROR(Tuple(&h->shape));
        have_shape = true;
      } else {
        return Error("unexpected key '" + key + "' in the header");
      }
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() != '}') return Error("expected ',' or '}'");
    }
    // Only whitespace and NUL padding may follow the dict.
    pos_ =
        std::min(text_.find_first_not_of(std::string_view(" \n\t\r\0", 5), pos_ + 1), text_.size());
    if (pos_ < text_.size()) return Error("unexpected text after the header dict");
    if (!have_descr || !have_order || !have_shape) {
      return Error("the header dict must have 'descr', 'fortran_order' and 'shape'");
    }
    pos_ = descr_at;
    return Descr(descr, &h->dtype);
  }

 private:
  Status Error(const std::string& what) const {
    return CorruptionAt(path_, base_ + pos_, "bad .npy header: " + what);
  }
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void SkipSpace() { pos_ = std::min(text_.find_first_not_of(" \n\t\r", pos_), text_.size()); }
  Status Expect(char c) {
    SkipSpace();
    if (Peek() != c) return Error(std::string("expected '") + c + "'");
    ++pos_;
    return Status::OK();
  }
  Status String(std::string* out) {
    char q = Peek();
    if (q != '\'' && q != '"') return Error("expected a quoted string");
    size_t end = text_.find(q, pos_ + 1);
    if (end == std::string_view::npos) return Error("unterminated string");
    *out = std::string(text_.substr(pos_ + 1, end - pos_ - 1));
    if (out->find('\\') != std::string::npos) return Error("escapes in strings are not supported");
    pos_ = end + 1;
    return Status::OK();
  }
  Status Bool(bool* out) {
    if (text_.substr(pos_, 4) == "True") {
      *out = true;
      pos_ += 4;
    } else if (text_.substr(pos_, 5) == "False") {
      *out = false;
      pos_ += 5;
    } else {
      return Error("expected True or False");
    }
    return Status::OK();
  }
  Status Tuple(std::vector<uint64_t>* out) {
    STOKER_RETURN_IF_ERROR(Expect('('));
    for (;;) {
      SkipSpace();
      if (Peek() == ')') break;
      if (Peek() < '0' || Peek() > '9') return Error("expected a non-negative integer dimension");
      uint64_t v = 0;
      while (Peek() >= '0' && Peek() <= '9') {
        if (v > (UINT64_MAX - 9) / 10) return Error("dimension too large");
        v = v * 10 + static_cast<uint64_t>(Peek() - '0');
        ++pos_;
      }
      if (Peek() == 'L') ++pos_;  // Python 2 longs
      out->push_back(v);
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
      } else if (Peek() != ')') {
        return Error("expected ',' or ')' in the shape");
      }
    }
    ++pos_;
    return Status::OK();
  }
  Status Descr(const std::string& d, TokenDType* out) {
    if (d.size() >= 2 && d[1] == 'O')
      return Error("object arrays (pickles) are refused: '" + d + "'");
    if (d.size() < 3) return Error("unsupported dtype '" + d + "'");
    char order = d[0], kind = d[1];
    std::string size_text = d.substr(2);
    if (order != '<' && order != '>' && order != '|' && order != '=') {
      return Error("dtype '" + d + "' has no byte-order character");
    }
    int size = 0;
    if (size_text == "1" || size_text == "2" || size_text == "4" || size_text == "8") {
      size = size_text[0] - '0';
    }
    if (order == '>' && size > 1) {
      return Error("big-endian dtype '" + d +
                   "' is not supported; convert it with "
                   "arr.astype(arr.dtype.newbyteorder('<'))");
    }
    struct Entry {
      char kind;
      int size;
      TokenDType dtype;
    };
    static constexpr Entry kTable[] = {
        {'u', 1, TokenDType::kUint8},   {'i', 1, TokenDType::kInt8},
        {'u', 2, TokenDType::kUint16},  {'i', 2, TokenDType::kInt16},
        {'u', 4, TokenDType::kUint32},  {'i', 4, TokenDType::kInt32},
        {'u', 8, TokenDType::kUint64},  {'i', 8, TokenDType::kInt64},
        {'f', 4, TokenDType::kFloat32}, {'f', 8, TokenDType::kFloat64},
    };
    for (const Entry& e : kTable) {
      if (e.kind == kind && e.size == size) {
        *out = e.dtype;
        return Status::OK();
      }
    }
    return Error("dtype '" + d + "' is not a token type (expected an integer or float type)");
  }

  std::string_view text_;
  uint64_t base_;
  const std::string& path_;
  size_t pos_ = 0;
};

}  // namespace

Result<NpyHeader> ParseNpyHeader(const uint8_t* data, uint64_t size, const std::string& path) {
  if (size == 0) return CorruptionAt(path, 0, "empty file, expected a .npy array");
  if (size < 8 || std::memcmp(data, kNpyMagic, sizeof(kNpyMagic)) != 0) {
    return CorruptionAt(path, 0, "bad magic, expected \"\\x93NUMPY\" (not a .npy file)");
  }
  NpyHeader h;
  h.major_version = data[6];
  if (h.major_version < 1 || h.major_version > 3 || data[7] != 0) {
    return CorruptionAt(path, 6,
                        "unsupported .npy version " + std::to_string(data[6]) + "." +
                            std::to_string(data[7]) + " (expected 1.0, 2.0 or 3.0)");
  }
  uint64_t len_bytes = h.major_version == 1 ? 2 : 4;
  if (size < 8 + len_bytes) return CorruptionAt(path, size, "truncated inside the header length");
  const uint64_t header_len =
      len_bytes == 2 ? LoadAs<uint16_t>(data + 8) : LoadAs<uint32_t>(data + 8);
  if (header_len > kNpyMaxHeaderBytes) {
    return CorruptionAt(path, 8,
                        "header length " + std::to_string(header_len) + " is over the limit of " +
                            std::to_string(kNpyMaxHeaderBytes) + " bytes");
  }
  uint64_t text_at = 8 + len_bytes;
  if (size < text_at + header_len) {
    return CorruptionAt(
        path, size,
        "truncated: the header needs " + std::to_string(text_at + header_len) + " bytes");
  }
  std::string_view text(reinterpret_cast<const char*>(data + text_at), header_len);
  STOKER_RETURN_IF_ERROR(DictParser(text, text_at, path).Parse(&h));
  if (h.shape.size() > 2) {
    return Unimplemented(path + ": a " + std::to_string(h.shape.size()) +
                         "-dimensional array is not token data (expected 1-D or 2-D)");
  }
  h.data_offset = text_at + header_len;
  const uint64_t item = TokenDTypeSize(h.dtype);
  h.num_elements = 1;
  for (uint64_t dim : h.shape) {
    if (dim != 0 && h.num_elements > UINT64_MAX / item / dim) {
      return CorruptionAt(path, text_at, "the shape describes more data than can exist");
    }
    h.num_elements *= dim;
  }
  uint64_t data_bytes = h.num_elements * item;
  uint64_t available = size - h.data_offset;
  if (available != data_bytes) {
    return CorruptionAt(path, available < data_bytes ? size : h.data_offset + data_bytes,
                        std::string(available < data_bytes ? "truncated" : "trailing bytes") +
                            ": the header announces " + std::to_string(h.num_elements) +
                            " elements (" + std::to_string(data_bytes) + " bytes of data) but " +
                            std::to_string(available) + " bytes follow the header");
  }
  return h;
}

}  // namespace stoker
