// The string values of an Arrow column, for the Arrow plugin's table readers
// (arrow_parquet_text_column.cc, arrow_ipc_text_column.cc): which types are
// text, the walk from a top-level column down a dotted path of struct fields,
// one value as a view, and Arrow's Status as tokenfeed's. Plugin-internal:
// only code built into libtokenfeed_arrow.so includes it.
#pragma once

#include <arrow/api.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenfeed/status.h"

namespace tokenfeed::text::arrow_plugin {

inline bool IsStringType(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::STRING_VIEW:
      return true;
    default:
      return false;
  }
}

inline std::vector<std::string> SplitDots(std::string_view s) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t dot = s.find('.', start);
    parts.emplace_back(s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

inline Status FromArrow(const arrow::Status& s, const std::string& path, std::string_view doing) {
  std::string m = "'" + path + "': " + std::string(doing) + ": " + s.ToString();
  if (s.IsIOError()) return Status::IoError(std::move(m));
  return Status::Corruption(std::move(m));
}

// From a batch's top-level column down `steps` (struct field names) to the
// string array; a null struct makes its fields null. Corruption when the
// data does not have the schema's shape.
inline Result<std::shared_ptr<arrow::Array>> StringColumn(std::shared_ptr<arrow::Array> array,
                                                          const std::vector<std::string>& steps,
                                                          const std::string& path) {
  for (const std::string& name : steps) {
    if (array->type_id() != arrow::Type::STRUCT) {
      return Status::Corruption("'" + path + "': field '" + name + "' is not below a struct");
    }
    auto& st = static_cast<const arrow::StructArray&>(*array);
    const int index = st.struct_type()->GetFieldIndex(name);
    if (index < 0) return Status::Corruption("'" + path + "': struct has no field '" + name + "'");
    auto child = st.GetFlattenedField(index);
    if (!child.ok()) return FromArrow(child.status(), path, "cannot read field '" + name + "'");
    array = std::move(*child);
  }
  if (!IsStringType(*array->type())) {
    return Status::Corruption("'" + path + "': column read as " + array->type()->ToString() + ", not a string");
  }
  return array;
}

// Value i of a string array (IsStringType); nullopt when null.
inline std::optional<std::string_view> StringValue(const arrow::Array& values, int64_t i) {
  if (values.IsNull(i)) return std::nullopt;
  switch (values.type_id()) {
    case arrow::Type::STRING:
      return static_cast<const arrow::StringArray&>(values).GetView(i);
    case arrow::Type::LARGE_STRING:
      return static_cast<const arrow::LargeStringArray&>(values).GetView(i);
    default:
      return static_cast<const arrow::StringViewArray&>(values).GetView(i);
  }
}

}  // namespace tokenfeed::text::arrow_plugin
