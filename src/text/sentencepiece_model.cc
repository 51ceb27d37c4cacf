#include "text/sentencepiece_model.h"

#include <cstring>

namespace stoker {
namespace {

// One level of protobuf fields over `data`. Every read checks the bytes left; a failed read
// leaves ok() false and the reader at its end.
class WireReader {
 public:
  explicit WireReader(std::string_view data) : p_(data) {}
  bool done() const { return p_.empty() || !ok_; }
  bool ok() const { return ok_; }

  // The next field's number and wire type; false at the end or on an error.
  bool Next(uint32_t* field, uint32_t* wire) {
    if (done()) return false;
    uint64_t key;
    if (!Varint(&key) || (key >> 3) == 0 || (key >> 3) > UINT32_MAX) return Fail();
    *field = static_cast<uint32_t>(key >> 3);
    *wire = static_cast<uint32_t>(key & 7);
    return true;
  }
  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_.empty()) return Fail();
      const uint8_t b = static_cast<uint8_t>(p_[0]);
      p_.remove_prefix(1);
      *v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return Fail();
  }
  bool Bytes(std::string_view* out) {
    uint64_t n;
    if (!Varint(&n) || n > p_.size()) return Fail();
    *out = p_.substr(0, n);
    p_.remove_prefix(n);
    return true;
  }
  bool Fixed32(uint32_t* v) {
    if (p_.size() < 4) return Fail();
    std::memcpy(v, p_.data(), 4);  // little-endian on every platform stoker builds for
    p_.remove_prefix(4);
    return true;
  }
  // Skips a field of wire type `wire` (groups, 3 and 4, are refused: proto2 files never use them
  // here).
  bool Skip(uint32_t wire) {
    uint64_t v;
    std::string_view s;
    uint32_t f;
    switch (wire) {
      case 0:
        return Varint(&v);
      case 1:
        if (p_.size() < 8) return Fail();
        p_.remove_prefix(8);
        return true;
      case 2:
        return Bytes(&s);
      case 5:
        return Fixed32(&f);
      default:
        return Fail();
    }
  }
  // Reads a varint field as int32 (negative numbers are 10-byte varints).
  bool Int32(uint32_t wire, int32_t* out) {
    uint64_t v;
    if (wire != 0 || !Varint(&v)) return Fail();
    *out = static_cast<int32_t>(static_cast<uint32_t>(v));
    return true;
  }
  bool Bool(uint32_t wire, bool* out) {
    uint64_t v;
    if (wire != 0 || !Varint(&v)) return Fail();
    *out = v != 0;
    return true;
  }
  bool String(uint32_t wire, std::string_view* out) { return wire == 2 ? Bytes(out) : Fail(); }

 private:
  bool Fail() {
    ok_ = false;
    p_ = {};
    return false;
  }
  std::string_view p_;
  bool ok_ = true;
};

bool ParsePiece(std::string_view data, SentencePieceModel::Piece* piece) {
  WireReader r(data);
  uint32_t field, wire;
  while (r.Next(&field, &wire)) {
    std::string_view s;
    int32_t type;
    uint32_t bits;
    if (field == 1) {
      if (!r.String(wire, &s)) return false;
      piece->piece.assign(s);
    } else if (field == 2) {
      if (wire != 5 || !r.Fixed32(&bits)) return false;
      std::memcpy(&piece->score, &bits, 4);
    } else if (field == 3) {
      if (!r.Int32(wire, &type)) return false;
      if (type < 1 || type > 6) return false;
      piece->type = static_cast<SentencePieceModel::PieceType>(type);
    } else if (!r.Skip(wire)) {
      return false;
    }
  }
  return r.ok();
}

bool ParseTrainer(std::string_view data, SentencePieceModel* m) {
  WireReader r(data);
  uint32_t field, wire;
  while (r.Next(&field, &wire)) {
    std::string_view s;
    bool ok = true;
    switch (field) {
      case 3:
        ok = r.Int32(wire, &m->model_type);
        break;
      case 24:
        ok = r.Bool(wire, &m->treat_whitespace_as_suffix);
        break;
      case 35:
        ok = r.Bool(wire, &m->byte_fallback);
        break;
      case 40:
        ok = r.Int32(wire, &m->unk_id);
        break;
      case 41:
        ok = r.Int32(wire, &m->bos_id);
        break;
      case 42:
        ok = r.Int32(wire, &m->eos_id);
        break;
      case 43:
        ok = r.Int32(wire, &m->pad_id);
        break;
      case 44:
        ok = r.String(wire, &s);
        if (ok) m->unk_surface.assign(s);
        break;
      default:
        ok = r.Skip(wire);
    }
    if (!ok) return false;
  }
  return r.ok();
}

// `denormalizer`: only notes whether it has a charsmap.
bool ParseNormalizer(std::string_view data, SentencePieceModel* m, bool denormalizer) {
  WireReader r(data);
  uint32_t field, wire;
  while (r.Next(&field, &wire)) {
    std::string_view s;
    bool ok = true;
    if (field == 1 || field == 2) {
      ok = r.String(wire, &s);
      if (ok && denormalizer) {
        m->has_denormalizer = m->has_denormalizer || (field == 2 && !s.empty());
      } else if (ok) {
        (field == 1 ? m->normalizer_name : m->precompiled_charsmap).assign(s);
      }
    } else if (field == 3 && !denormalizer) {
      ok = r.Bool(wire, &m->add_dummy_prefix);
    } else if (field == 4 && !denormalizer) {
      ok = r.Bool(wire, &m->remove_extra_whitespaces);
    } else if (field == 5 && !denormalizer) {
      ok = r.Bool(wire, &m->escape_whitespaces);
    } else {
      ok = r.Skip(wire);
    }
    if (!ok) return false;
  }
  return r.ok();
}

}  // namespace

Result<SentencePieceModel> ParseSentencePieceModel(std::string_view bytes,
                                                   std::string_view origin) {
  auto fail = [&](std::string_view what) {
    return InvalidArgument(std::string(origin) + ": not a valid SentencePiece model (" +
                           std::string(what) + ")");
  };
  SentencePieceModel m;
  WireReader r(bytes);
  uint32_t field, wire;
  while (r.Next(&field, &wire)) {
    std::string_view s;
    if (field >= 1 && field <= 5 && field != 4) {
      if (!r.String(wire, &s)) return fail("a truncated or malformed message");
      if (field == 1) {
        m.pieces.emplace_back();
        if (!ParsePiece(s, &m.pieces.back())) {
          return fail("pieces[" + std::to_string(m.pieces.size() - 1) + "] is malformed");
        }
      } else if (field == 2 && !ParseTrainer(s, &m)) {
        return fail("trainer_spec is malformed");
      } else if ((field == 3 || field == 5) && !ParseNormalizer(s, &m, field == 5)) {
        return fail(field == 3 ? "normalizer_spec is malformed" : "denormalizer_spec is malformed");
      }
    } else if (!r.Skip(wire)) {
      return fail("a truncated or malformed field");
    }
  }
  if (!r.ok()) return fail("a truncated or malformed field");
  if (m.pieces.empty()) return fail("no pieces");
  return m;
}

}  // namespace stoker
