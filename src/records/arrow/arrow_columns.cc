#include "records/arrow/arrow_columns.h"

#include <arrow/array.h>
#include <arrow/type.h>
#include <arrow/util/float16.h>

#include <limits>

#include "records/arrow/arrow_json.h"

namespace stoker {
namespace {

// Calls f(int64_t) for each valid value in [begin, end) of the integer (or bool) array `values`.
// One type switch per range, not per value: token columns are long.
template <typename F>
void VisitInts(const arrow::Array& values, int64_t begin, int64_t end, F&& f) {
  auto loop = [&](const auto& typed) {
    for (int64_t j = begin; j < end; ++j) {
      if (typed.IsValid(j)) f(static_cast<int64_t>(typed.Value(j)));
    }
  };
  switch (values.type_id()) {
    case arrow::Type::INT8:
      return loop(static_cast<const arrow::Int8Array&>(values));
    case arrow::Type::INT16:
      return loop(static_cast<const arrow::Int16Array&>(values));
    case arrow::Type::INT32:
      return loop(static_cast<const arrow::Int32Array&>(values));
    case arrow::Type::INT64:
      return loop(static_cast<const arrow::Int64Array&>(values));
    case arrow::Type::UINT8:
      return loop(static_cast<const arrow::UInt8Array&>(values));
    case arrow::Type::UINT16:
      return loop(static_cast<const arrow::UInt16Array&>(values));
    case arrow::Type::UINT32:
      return loop(static_cast<const arrow::UInt32Array&>(values));
    case arrow::Type::UINT64:
      return loop(static_cast<const arrow::UInt64Array&>(values));
    case arrow::Type::BOOL:
      return loop(static_cast<const arrow::BooleanArray&>(values));
    default:
      return;
  }
}

template <typename F>
void VisitFloats(const arrow::Array& values, int64_t begin, int64_t end, F&& f) {
  auto loop = [&](const auto& typed) {
    for (int64_t j = begin; j < end; ++j) {
      if (typed.IsValid(j)) f(static_cast<double>(typed.Value(j)));
    }
  };
  switch (values.type_id()) {
    case arrow::Type::FLOAT:
      return loop(static_cast<const arrow::FloatArray&>(values));
    case arrow::Type::DOUBLE:
      return loop(static_cast<const arrow::DoubleArray&>(values));
    case arrow::Type::HALF_FLOAT: {
      const auto& typed = static_cast<const arrow::HalfFloatArray&>(values);
      for (int64_t j = begin; j < end; ++j) {
        if (typed.IsValid(j)) f(arrow::util::Float16::FromBits(typed.Value(j)).ToDouble());
      }
      return;
    }
    default:
      return;
  }
}

bool IsIntegerLike(arrow::Type::type id) {
  return arrow::is_integer(id) || id == arrow::Type::BOOL;
}
bool IsFloat(arrow::Type::type id) { return arrow::is_floating(id); }

// The element range [begin, end) of list row `row` and the child array, for the three list types.
template <typename L>
void ListRange(const arrow::Array& column, int64_t row, const arrow::Array** values, int64_t* begin,
               int64_t* end) {
  const auto& list = static_cast<const L&>(column);
  *values = list.values().get();
  *begin = list.value_offset(row);
  *end = *begin + list.value_length(row);
}

void ListRow(const arrow::Array& column, int64_t row, const arrow::Array** values, int64_t* begin,
             int64_t* end) {
  switch (column.type_id()) {
    case arrow::Type::LIST:
      return ListRange<arrow::ListArray>(column, row, values, begin, end);
    case arrow::Type::LARGE_LIST:
      return ListRange<arrow::LargeListArray>(column, row, values, begin, end);
    default:
      return ListRange<arrow::FixedSizeListArray>(column, row, values, begin, end);
  }
}

bool IsList(arrow::Type::type id) {
  return id == arrow::Type::LIST || id == arrow::Type::LARGE_LIST ||
         id == arrow::Type::FIXED_SIZE_LIST;
}

}  // namespace

Status ArrowRowReader::Plan(const arrow::Schema& schema) {
  kinds_.clear();
  for (const auto& field : schema.fields()) {
    const arrow::DataType& type = *field->type();
    arrow::Type::type id = type.id();
    Kind kind = Kind::kSkip;
    if (id == arrow::Type::STRING || id == arrow::Type::LARGE_STRING ||
        id == arrow::Type::STRING_VIEW) {
      kind = Kind::kString;
    } else if (id == arrow::Type::BINARY || id == arrow::Type::LARGE_BINARY ||
               id == arrow::Type::BINARY_VIEW || id == arrow::Type::FIXED_SIZE_BINARY) {
      kind = Kind::kBytes;
    } else if (IsIntegerLike(id)) {
      kind = Kind::kInt;
    } else if (IsFloat(id)) {
      kind = Kind::kFloat;
    } else if (IsJsonColumnType(type)) {
      kind = Kind::kJson;
    } else if (IsList(id)) {
      arrow::Type::type child = type.field(0)->type()->id();
      if (IsIntegerLike(child)) kind = Kind::kIntList;
      if (IsFloat(child)) kind = Kind::kFloatList;
    }
    kinds_.push_back(kind);
  }
  return Status::OK();
}

void ArrowRowReader::AppendField(int column, int64_t row, std::vector<Field>* fields) const {
  const arrow::Array& a = *batch_->column(column);
  Kind kind = kinds_[column];
  if (kind == Kind::kSkip || a.IsNull(row)) return;
  Field f;
  f.name = batch_->schema()->field(column)->name();
  switch (kind) {
    case Kind::kString:
    case Kind::kBytes: {
      f.type = kind == Kind::kString ? FieldType::kString : FieldType::kBytes;
      std::string_view v;
      switch (a.type_id()) {
        case arrow::Type::STRING:
        case arrow::Type::BINARY:
          v = static_cast<const arrow::BinaryArray&>(a).GetView(row);
          break;
        case arrow::Type::LARGE_STRING:
        case arrow::Type::LARGE_BINARY:
          v = static_cast<const arrow::LargeBinaryArray&>(a).GetView(row);
          break;
        case arrow::Type::STRING_VIEW:
        case arrow::Type::BINARY_VIEW:
          v = static_cast<const arrow::BinaryViewArray&>(a).GetView(row);
          break;
        default:
          v = static_cast<const arrow::FixedSizeBinaryArray&>(a).GetView(row);
      }
      f.bytes.assign(v.data(), v.size());
      break;
    }
    case Kind::kInt:
      f.type = FieldType::kInt;
      VisitInts(a, row, row + 1, [&](int64_t v) { f.ints.push_back(v); });
      break;
    case Kind::kFloat:
      f.type = FieldType::kFloat;
      VisitFloats(a, row, row + 1, [&](double v) { f.floats.push_back(v); });
      break;
    case Kind::kIntList:
    case Kind::kFloatList: {
      const arrow::Array* values = nullptr;
      int64_t begin = 0, end = 0;
      ListRow(a, row, &values, &begin, &end);
      if (kind == Kind::kIntList) {
        f.type = FieldType::kTokens;
        f.ints.reserve(end - begin);
        VisitInts(*values, begin, end, [&](int64_t v) { f.ints.push_back(v); });
      } else {
        f.type = FieldType::kFloat;
        VisitFloats(*values, begin, end, [&](double v) { f.floats.push_back(v); });
      }
      break;
    }
    case Kind::kJson:
      f.type = FieldType::kJson;
      f.bytes = ArrowValueToJson(a, row).dump(-1, ' ', /*ensure_ascii=*/false,
                                              nlohmann::ordered_json::error_handler_t::replace);
      break;
    case Kind::kSkip:
      return;
  }
  fields->push_back(std::move(f));
}

Result<std::optional<Record>> ArrowRowReader::Next() {
  while (batch_ == nullptr || row_in_batch_ >= batch_->num_rows()) {
    STOKER_ASSIGN_OR_RETURN(batch_, next_batch_());
    row_in_batch_ = 0;
    if (batch_ == nullptr) return std::optional<Record>();
    if (kinds_.empty()) STOKER_RETURN_IF_ERROR(Plan(*batch_->schema()));
  }
  Record r{.key = std::to_string(next_row_),
           .source = source_,
           .index = index_,
           .offset_bytes = offset_bytes_};
  for (int c = 0; c < batch_->num_columns(); ++c) AppendField(c, row_in_batch_, &r.fields);
  ++row_in_batch_;
  ++next_row_;
  ++index_;
  return std::optional<Record>(std::move(r));
}

Status AppendTokenColumn(const arrow::Array& column, const std::string& where, TokenColumn* out) {
  if (!IsList(column.type_id()) || !IsIntegerLike(column.type()->field(0)->type()->id())) {
    return InvalidArgument(where + " is " + column.type()->ToString() +
                           ", not a list of integers (token ids)");
  }
  if (out->offsets.empty()) out->offsets.push_back(0);
  bool overflow = false;
  int64_t bad = 0;
  for (int64_t row = 0; row < column.length(); ++row) {
    if (column.IsValid(row)) {
      const arrow::Array* values = nullptr;
      int64_t begin = 0, end = 0;
      ListRow(column, row, &values, &begin, &end);
      VisitInts(*values, begin, end, [&](int64_t v) {
        if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
          if (!overflow) bad = v;
          overflow = true;
        }
        out->tokens.push_back(static_cast<int32_t>(v));
      });
    }
    if (overflow) {
      return OutOfRange(where + " row " + std::to_string(out->offsets.size() - 1) + ": token " +
                        std::to_string(bad) + " does not fit in 32 bits");
    }
    out->offsets.push_back(out->tokens.size());
  }
  return Status::OK();
}

}  // namespace stoker
