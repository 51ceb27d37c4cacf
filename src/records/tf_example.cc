#include "records/tf_example.h"

#include <cstring>

namespace stoker {
namespace {

// A cursor over protobuf wire data; `base` is the offset of `data` in the whole message.
class Wire {
 public:
  Wire(std::string_view data, size_t base) : data_(data), base_(base) {}

  bool done() const { return pos_ >= data_.size(); }
  size_t offset() const { return base_ + pos_; }

  Status Varint(uint64_t* v) {
    uint64_t x = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (pos_ >= data_.size()) return Error("truncated varint");
      uint8_t b = static_cast<uint8_t>(data_[pos_++]);
      if (shift == 63 && b > 1) return Error("varint overflows 64 bits");
      x |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        *v = x;
        return Status::OK();
      }
    }
    return Error("varint longer than 10 bytes");
  }

  Status Bytes(size_t n, std::string_view* out) {
    if (n > data_.size() - pos_) return Error("length-delimited field past the end");
    *out = data_.substr(pos_, n);
    pos_ += n;
    return Status::OK();
  }

  // Reads a tag; *field and *wire_type split it.
  Status Tag(uint32_t* field, uint32_t* wire_type) {
    uint64_t tag;
    STOKER_RETURN_IF_ERROR(Varint(&tag));
    *field = static_cast<uint32_t>(tag >> 3);
    *wire_type = static_cast<uint32_t>(tag & 7);
    if (*field == 0) return Error("field number 0");
    return Status::OK();
  }

  Status Delimited(std::string_view* out, size_t* out_base) {
    uint64_t n;
    STOKER_RETURN_IF_ERROR(Varint(&n));
    *out_base = offset();
    return Bytes(static_cast<size_t>(std::min<uint64_t>(n, SIZE_MAX)), out);
  }

  Status Skip(uint32_t wire_type) {
    uint64_t v;
    std::string_view s;
    switch (wire_type) {
      case 0:
        return Varint(&v);
      case 1:
        return Bytes(8, &s);
      case 2: {
        size_t b;
        return Delimited(&s, &b);
      }
      case 5:
        return Bytes(4, &s);
      default:
        return Error("unsupported wire type " + std::to_string(wire_type));
    }
  }

  Status Error(const std::string& what) const {
    return Corruption("malformed tf.train.Example: " + what + " at message byte " +
                      std::to_string(offset()));
  }

 private:
  std::string_view data_;
  size_t base_;
  size_t pos_ = 0;
};

// Walks the fields of the message `body` (at offset `base` of the whole message): calls
// f(field, value, value_base) for each length-delimited field numbered lo to hi, skips the others.
template <typename F>
Status ForEachDelimited(std::string_view body, size_t base, uint32_t lo, uint32_t hi, F&& f) {
  Wire w(body, base);
  while (!w.done()) {
    uint32_t field, wt;
    STOKER_RETURN_IF_ERROR(w.Tag(&field, &wt));
    if (field < lo || field > hi || wt != 2) {
      STOKER_RETURN_IF_ERROR(w.Skip(wt));
      continue;
    }
    std::string_view value;
    size_t value_base = 0;
    STOKER_RETURN_IF_ERROR(w.Delimited(&value, &value_base));
    STOKER_RETURN_IF_ERROR(f(field, value, value_base));
  }
  return Status::OK();
}

Status DecodeFloats(std::string_view packed, Wire& w, std::vector<double>* out) {
  if (packed.size() % 4 != 0)
    return w.Error("packed float list of " + std::to_string(packed.size()) + " bytes");
  for (size_t i = 0; i < packed.size(); i += 4) {
    float f;
    std::memcpy(&f, packed.data() + i, 4);
    out->push_back(f);
  }
  return Status::OK();
}

// BytesList / FloatList / Int64List body into *f.
Status DecodeList(std::string_view body, size_t base, uint32_t kind, Field* f) {
  Wire w(body, base);
  f->bytes.clear();
  f->more_bytes.clear();
  f->ints.clear();
  f->floats.clear();
  f->byte_values = 0;
  f->type = kind == 1 ? FieldType::kBytes : kind == 2 ? FieldType::kFloat : FieldType::kInt;
  while (!w.done()) {
    uint32_t field, wt;
    STOKER_RETURN_IF_ERROR(w.Tag(&field, &wt));
    if (field != 1) {
      STOKER_RETURN_IF_ERROR(w.Skip(wt));
      continue;
    }
    if (kind == 1 && wt == 2) {
      std::string_view v;
      size_t b;
      STOKER_RETURN_IF_ERROR(w.Delimited(&v, &b));
      if (f->byte_values++ == 0)
        f->bytes.assign(v);
      else
        f->more_bytes.emplace_back(v);
    } else if (kind == 2 && wt == 2) {
      std::string_view v;
      size_t b;
      STOKER_RETURN_IF_ERROR(w.Delimited(&v, &b));
      STOKER_RETURN_IF_ERROR(DecodeFloats(v, w, &f->floats));
    } else if (kind == 2 && wt == 5) {
      std::string_view v;
      STOKER_RETURN_IF_ERROR(w.Bytes(4, &v));
      STOKER_RETURN_IF_ERROR(DecodeFloats(v, w, &f->floats));
    } else if (kind == 3 && wt == 2) {
      std::string_view v;
      size_t b;
      STOKER_RETURN_IF_ERROR(w.Delimited(&v, &b));
      Wire packed(v, b);
      while (!packed.done()) {
        uint64_t x;
        STOKER_RETURN_IF_ERROR(packed.Varint(&x));
        f->ints.push_back(static_cast<int64_t>(x));
      }
    } else if (kind == 3 && wt == 0) {
      uint64_t x;
      STOKER_RETURN_IF_ERROR(w.Varint(&x));
      f->ints.push_back(static_cast<int64_t>(x));
    } else {
      return w.Error("wire type " + std::to_string(wt) + " for a list value");
    }
  }
  return Status::OK();
}

Status DecodeFeature(std::string_view body, size_t base, Field* f) {
  f->type = FieldType::kBytes;  // an empty Feature: no value at all
  f->byte_values = 0;
  return ForEachDelimited(body, base, 1, 3, [&](uint32_t kind, std::string_view list, size_t b) {
    return DecodeList(list, b, kind, f);  // the last kind wins (oneof)
  });
}

Status DecodeFeatures(std::string_view body, size_t base, std::vector<Field>* fields) {
  return ForEachDelimited(body, base, 1, 1, [&](uint32_t, std::string_view entry, size_t at) {
    std::string key;
    Field value;
    value.byte_values = 0;
    auto entry_field = [&](uint32_t field, std::string_view v, size_t vb) {
      if (field == 2) return DecodeFeature(v, vb, &value);
      key.assign(v);  // field 1
      return Status::OK();
    };
    STOKER_RETURN_IF_ERROR(ForEachDelimited(entry, at, 1, 2, entry_field));
    value.name = key;
    bool replaced = false;
    for (Field& existing : *fields) {
      if (existing.name == key) {
        existing = std::move(value);
        replaced = true;
        break;
      }
    }
    if (!replaced) fields->push_back(std::move(value));
    return Status::OK();
  });
}

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutDelimited(uint32_t field, std::string_view body, std::string* out) {
  PutVarint((field << 3) | 2, out);
  PutVarint(body.size(), out);
  out->append(body);
}

}  // namespace

Status DecodeTfExample(std::string_view message, std::vector<Field>* fields) {
  fields->clear();
  return ForEachDelimited(message, 0, 1, 1, [&](uint32_t, std::string_view features, size_t base) {
    return DecodeFeatures(features, base, fields);
  });
}

std::string EncodeTfExample(const std::vector<Field>& fields) {
  std::string features;
  for (const Field& f : fields) {
    std::string list;
    uint32_t kind = 1;
    switch (f.type) {
      case FieldType::kBytes:
      case FieldType::kString:
      case FieldType::kJson: {
        kind = 1;
        if (f.byte_values > 0) PutDelimited(1, f.bytes, &list);
        for (const std::string& more : f.more_bytes) PutDelimited(1, more, &list);
        break;
      }
      case FieldType::kFloat: {
        kind = 2;
        std::string packed;
        for (double d : f.floats) {
          float x = static_cast<float>(d);
          packed.append(reinterpret_cast<const char*>(&x), 4);
        }
        if (!packed.empty()) PutDelimited(1, packed, &list);
        break;
      }
      case FieldType::kInt:
      case FieldType::kTokens: {
        kind = 3;
        std::string packed;
        for (int64_t v : f.ints) PutVarint(static_cast<uint64_t>(v), &packed);
        if (!packed.empty()) PutDelimited(1, packed, &list);
        break;
      }
    }
    std::string feature;
    PutDelimited(kind, list, &feature);
    std::string entry;
    PutDelimited(1, f.name, &entry);
    PutDelimited(2, feature, &entry);
    PutDelimited(1, entry, &features);
  }
  std::string example;
  PutDelimited(1, features, &example);
  return example;
}

}  // namespace stoker
