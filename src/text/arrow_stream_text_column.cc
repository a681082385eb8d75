#include "text/arrow_stream_text_column.h"

#include <cstring>
#include <limits>
#include <utility>

namespace tokenfeed::text {
namespace {

bool BitSet(const uint8_t* bitmap, int64_t i) { return ((bitmap[i >> 3] >> (i & 7)) & 1) != 0; }

bool Add(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }

// The largest slot (row of an array, counting its offset) whose bytes can be
// addressed in every buffer: a string view is 16 bytes, the widest element.
constexpr int64_t kMaxSlot = std::numeric_limits<int64_t>::max() / 16;

// Element `i` of a buffer of T. The C data interface only recommends that
// buffers be aligned, so a valid producer may hand over unaligned ones: the
// load goes through memcpy (one plain load on the targets built for).
template <typename T>
T Load(const void* buffer, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(buffer) + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

// Index `slot` of a dictionary's index buffer of format `f` (an integer type);
// *fits is false for a uint64 past int64.
int64_t ReadIndex(const void* p, char f, int64_t slot, bool* fits) {
  *fits = true;
  switch (f) {
    case 'c': return Load<int8_t>(p, slot);
    case 'C': return Load<uint8_t>(p, slot);
    case 's': return Load<int16_t>(p, slot);
    case 'S': return Load<uint16_t>(p, slot);
    case 'i': return Load<int32_t>(p, slot);
    case 'I': return Load<uint32_t>(p, slot);
    case 'l': return Load<int64_t>(p, slot);
    default: break;
  }
  const uint64_t u = Load<uint64_t>(p, slot);
  *fits = u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  return static_cast<int64_t>(u);
}

std::string_view Format(const ArrowSchema& s) { return s.format ? std::string_view(s.format) : std::string_view(); }
std::string_view Name(const ArrowSchema& s) { return s.name ? std::string_view(s.name) : std::string_view(); }

bool IsStringFormat(std::string_view f) { return f == "u" || f == "U" || f == "vu"; }

// The width of a dictionary's index type, 0 when the format is not an integer.
int IndexWidth(std::string_view f) {
  if (f == "c" || f == "C") return 1;
  if (f == "s" || f == "S") return 2;
  if (f == "i" || f == "I") return 4;
  if (f == "l" || f == "L") return 8;
  return 0;
}

// A type as pyarrow prints it, for messages.
std::string TypeName(const ArrowSchema& s, int depth = 0) {
  if (s.dictionary != nullptr && depth < 8) {
    return "dictionary<values=" + TypeName(*s.dictionary, depth + 1) + ", indices=" +
           TypeName(ArrowSchema{s.format, nullptr, nullptr, 0, 0, nullptr, nullptr, nullptr, nullptr}, depth + 1) +
           ", ordered=" + ((s.flags & ARROW_FLAG_DICTIONARY_ORDERED) ? "1" : "0") + ">";
  }
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {"n", "null"},          {"b", "bool"},          {"c", "int8"},         {"C", "uint8"},
      {"s", "int16"},         {"S", "uint16"},        {"i", "int32"},        {"I", "uint32"},
      {"l", "int64"},         {"L", "uint64"},        {"e", "halffloat"},    {"f", "float"},
      {"g", "double"},        {"z", "binary"},        {"Z", "large_binary"}, {"vz", "binary_view"},
      {"u", "string"},        {"U", "large_string"},  {"vu", "string_view"}, {"tdD", "date32[day]"},
      {"tdm", "date64[ms]"},
  };
  const std::string_view f = Format(s);
  for (const auto& [format, name] : kNames) {
    if (f == format) return std::string(name);
  }
  if (f == "+s" && depth < 8) {
    std::string t = "struct<";
    for (int64_t i = 0; i < s.n_children && s.children != nullptr; ++i) {
      if (s.children[i] == nullptr) continue;
      if (i > 0) t += ", ";
      t += std::string(Name(*s.children[i])) + ": " + TypeName(*s.children[i], depth + 1);
    }
    return t + ">";
  }
  if ((f == "+l" || f == "+L") && depth < 8 && s.n_children == 1 && s.children && s.children[0]) {
    return std::string(f == "+l" ? "list" : "large_list") + "<" + std::string(Name(*s.children[0])) + ": " +
           TypeName(*s.children[0], depth + 1) + ">";
  }
  if (f.substr(0, 2) == "ts") return "timestamp (Arrow format '" + std::string(f) + "')";
  return "the Arrow type of format '" + std::string(f) + "'";
}

std::string Join(const ArrowSchema& s) {
  std::string names;
  for (int64_t i = 0; i < s.n_children; ++i) {
    if (!names.empty()) names += ", ";
    names += Name(*s.children[i]);
  }
  return names;
}

// A struct schema node whose children can be walked.
bool WellFormedStruct(const ArrowSchema& s) {
  if (Format(s) != "+s" || s.n_children < 0 || (s.n_children > 0 && s.children == nullptr)) return false;
  for (int64_t i = 0; i < s.n_children; ++i) {
    if (s.children[i] == nullptr) return false;
  }
  return true;
}

int64_t FindChild(const ArrowSchema& s, std::string_view name) {
  for (int64_t i = 0; i < s.n_children; ++i) {
    if (Name(*s.children[i]) == name) return i;
  }
  return -1;
}

}  // namespace

// A struct on the way to the column, in the current batch: its validity
// bitmap (null: no nulls) and the buffer slot of the batch's row 0.
struct ArrowStreamTextColumn::Level {
  const uint8_t* validity = nullptr;
  int64_t first_slot = 0;
};

// A checked string array: utf8 (32-bit offsets), large utf8 (64-bit) or
// string_view (16-byte views into variadic data buffers).
struct ArrowStreamTextColumn::StringValues {
  enum Kind : uint8_t { kUtf8, kLargeUtf8, kView } kind = kUtf8;
  const uint8_t* validity = nullptr;
  const void* offsets = nullptr;  // int32 (utf8) or int64 (large utf8), maybe unaligned
  const char* data = nullptr;
  const uint8_t* views = nullptr;
  const void* const* view_data = nullptr;  // the variadic buffers
  int64_t first_slot = 0;                  // of the slots that were checked
  int64_t slots = 0;

  bool Valid(int64_t slot) const { return validity == nullptr || BitSet(validity, slot); }

  // An empty text may have no data buffer to point into.
  std::string_view Slice(int64_t begin, int64_t end) const {
    return end == begin ? std::string_view() : std::string_view(data + begin, static_cast<size_t>(end - begin));
  }

  // The hot path: one value, already checked by CheckStringArray.
  std::string_view At(int64_t slot) const {
    switch (kind) {
      case kUtf8:
        return Slice(Load<int32_t>(offsets, slot), Load<int32_t>(offsets, slot + 1));
      case kLargeUtf8:
        return Slice(Load<int64_t>(offsets, slot), Load<int64_t>(offsets, slot + 1));
      case kView:
        break;
    }
    const uint8_t* view = views + 16 * slot;
    int32_t length;
    std::memcpy(&length, view, 4);
    if (length <= 12) return {reinterpret_cast<const char*>(view + 4), static_cast<size_t>(length)};
    int32_t buffer, offset;
    std::memcpy(&buffer, view + 8, 4);
    std::memcpy(&offset, view + 12, 4);
    return {static_cast<const char*>(view_data[buffer]) + offset, static_cast<size_t>(length)};
  }
};

ArrowStreamTextColumn::ArrowStreamTextColumn(std::string name, std::string field)
    : name_(std::move(name)), field_(std::move(field)), values_(std::make_unique<StringValues>()) {}

ArrowStreamTextColumn::~ArrowStreamTextColumn() {
  ReleaseBatch();
  if (schema_.release != nullptr) schema_.release(&schema_);
  if (stream_.release != nullptr) stream_.release(&stream_);
}

void ArrowStreamTextColumn::ReleaseBatch() {
  if (batch_.release != nullptr) batch_.release(&batch_);
  batch_ = ArrowArray{};
  levels_.clear();
  indices_ = nullptr;
}

Result<std::unique_ptr<ArrowStreamTextColumn>> ArrowStreamTextColumn::Open(ArrowArrayStream* stream,
                                                                           std::string_view field, std::string name) {
  if (stream == nullptr || stream->release == nullptr) {
    return Status::InvalidArgument("'" + name + "': the Arrow stream was already consumed or released; an Arrow "
                                   "stream is read once: export it again (__arrow_c_stream__)");
  }
  std::unique_ptr<ArrowStreamTextColumn> c(new ArrowStreamTextColumn(std::move(name), std::string(field)));
  c->stream_ = *stream;
  stream->release = nullptr;
  if (c->stream_.get_schema == nullptr || c->stream_.get_next == nullptr || c->stream_.get_last_error == nullptr) {
    return Status::InvalidArgument("'" + c->name_ + "': the Arrow stream lacks a callback (get_schema, get_next "
                                   "or get_last_error is null)");
  }
  const int rc = c->stream_.get_schema(&c->stream_, &c->schema_);
  if (rc != 0) {
    // After an error the schema is not valid, even where the producer wrote
    // part of it (a release callback): releasing it is the producer's business.
    c->schema_ = ArrowSchema{};
    const char* why = c->stream_.get_last_error(&c->stream_);
    return Status::IoError("'" + c->name_ + "': the Arrow stream's producer could not give the schema (error " +
                           std::to_string(rc) + ": " + (why ? why : "no message") + ")");
  }
  if (c->schema_.release == nullptr) {
    return Status::InvalidArgument("'" + c->name_ + "': the Arrow stream gave a released schema");
  }
  TF_RETURN_IF_ERROR(c->ResolveField());
  return c;
}

// The same rules and messages as a table file's column: a top-level column
// of that name first (dots allowed), else a dotted path into struct columns.
Status ArrowStreamTextColumn::ResolveField() {
  const ArrowSchema& top = schema_;
  if (!WellFormedStruct(top)) {
    return Status::InvalidArgument("'" + name_ + "': the Arrow stream's rows are " + TypeName(top) +
                                   ", not record batches (a struct of columns)");
  }
  schema_path_ = {&top};
  child_path_.clear();
  if (int64_t i = FindChild(top, field_); i >= 0) {
    child_path_.push_back(i);
    schema_path_.push_back(top.children[i]);
  } else {
    std::vector<std::string_view> parts;
    for (size_t start = 0;;) {
      const size_t dot = field_.find('.', start);
      parts.push_back(std::string_view(field_).substr(start, dot == std::string::npos ? std::string::npos : dot - start));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    int64_t first = FindChild(top, parts[0]);
    if (parts.size() == 1 || first < 0) {
      const std::string names = Join(top);
      return Status::InvalidArgument("the Arrow stream has no column '" + field_ + "' (its columns: " +
                                     (names.empty() ? "none" : names) + "); give the text column with field=");
    }
    const ArrowSchema* node = top.children[first];
    child_path_.push_back(first);
    schema_path_.push_back(node);
    std::string where(parts[0]);
    for (size_t k = 1; k < parts.size(); ++k) {
      if (Format(*node) != "+s" || node->dictionary != nullptr) {
        return Status::InvalidArgument("the Arrow stream's column '" + field_ + "': '" + where + "' is " +
                                       TypeName(*node) + ", not a struct with a field '" + std::string(parts[k]) +
                                       "'");
      }
      if (!WellFormedStruct(*node)) {
        return Status::InvalidArgument("'" + name_ + "': the schema of '" + where + "' is malformed (a null child)");
      }
      const int64_t child = FindChild(*node, parts[k]);
      if (child < 0) {
        return Status::InvalidArgument("the Arrow stream has no column '" + field_ + "' ('" + where +
                                       "' has the fields: " + Join(*node) + ")");
      }
      node = node->children[child];
      child_path_.push_back(child);
      schema_path_.push_back(node);
      where += "." + std::string(parts[k]);
    }
  }
  const ArrowSchema& column = *schema_path_.back();
  const bool text = column.dictionary != nullptr
                        ? IndexWidth(Format(column)) != 0 && column.dictionary->dictionary == nullptr &&
                              IsStringFormat(Format(*column.dictionary))
                        : IsStringFormat(Format(column));
  if (!text) {
    return Status::InvalidArgument("the Arrow stream's column '" + field_ + "' is " + TypeName(column) +
                                   ", not a string column; give the text column with field=");
  }
  index_format_ = column.dictionary != nullptr ? Format(column)[0] : 0;
  return Status::OK();
}

std::string ArrowStreamTextColumn::BatchContext(int64_t row) const {
  std::string m = "'" + name_ + "' batch " + std::to_string(batches_ - 1);
  if (row >= 0) {
    m += ", row " + std::to_string(row) + " of the batch (row " + std::to_string(batch_first_row_ + row) +
         " of the stream)";
  }
  return m + ", column '" + field_ + "': ";
}

std::string ArrowStreamTextColumn::DictionaryContext(int64_t value) const {
  return "'" + name_ + "' dictionary value " + std::to_string(value) + " of batch " + std::to_string(batches_ - 1) +
         ", column '" + field_ + "': ";
}

Status ArrowStreamTextColumn::CheckStringArray(const ArrowArray& a, const ArrowSchema& schema, int64_t first_slot,
                                               int64_t slots, bool dictionary, StringValues* out) {
  const std::string where = dictionary ? "its dictionary: " : "";
  auto bad = [&](std::string what) { return Status::Corruption(BatchContext() + where + what); };
  // Slot `slot` of this array: a row of the batch, or a value of the dictionary.
  auto bad_slot = [&](int64_t slot, std::string what) {
    return Status::Corruption(
        (dictionary ? DictionaryContext(slot - first_slot) : BatchContext(slot - first_slot)) + what);
  };
  const std::string_view f = Format(schema);
  *out = StringValues{};
  out->first_slot = first_slot;
  out->slots = slots;
  if (a.n_children != 0) return bad("a string array with " + std::to_string(a.n_children) + " children, not 0");
  if (f == "vu") {
    if (a.n_buffers < 3 || a.buffers == nullptr) {
      return bad("a string_view array with " + std::to_string(a.n_buffers) +
                 " buffers; it needs at least 3 (validity, views, buffer sizes)");
    }
  } else if (a.n_buffers != 3 || a.buffers == nullptr) {
    return bad("a " + TypeName(schema) + " array with " + std::to_string(a.n_buffers) +
               " buffers, not 3 (validity, offsets, data)");
  }
  if (a.null_count > 0 && a.buffers[0] == nullptr) {
    return bad(std::to_string(a.null_count) + " nulls but no validity bitmap");
  }
  out->validity = static_cast<const uint8_t*>(a.buffers[0]);
  if (slots == 0) return Status::OK();
  if (first_slot > kMaxSlot - slots) {
    return bad("the offset and length (" + std::to_string(first_slot) + ", " + std::to_string(slots) +
               ") address more than 2^63 bytes");
  }
  if (f == "u" || f == "U") {
    if (a.buffers[1] == nullptr) return bad("the offsets buffer is missing");
    out->kind = f == "u" ? StringValues::kUtf8 : StringValues::kLargeUtf8;
    out->data = static_cast<const char*>(a.buffers[2]);
    out->offsets = a.buffers[1];
    auto check = [&](auto width) -> Status {
      using Offset = decltype(width);
      auto at = [&](int64_t i) { return Load<Offset>(out->offsets, i); };
      if (at(first_slot) < 0) {
        return bad("the offset of the first " + std::string(dictionary ? "value" : "row") + " is negative (" +
                   std::to_string(at(first_slot)) + ")");
      }
      for (int64_t i = first_slot; i < first_slot + slots; ++i) {
        if (at(i + 1) < at(i)) {
          return bad_slot(i, "the offsets decrease (from " + std::to_string(at(i)) + " to " +
                                 std::to_string(at(i + 1)) + ")");
        }
      }
      if (at(first_slot + slots) > at(first_slot) && out->data == nullptr) return bad("the data buffer is missing");
      return Status::OK();
    };
    if (f == "u") return check(int32_t{});
    return check(int64_t{});
  }
  // string_view: buffers are validity, views, the variadic data buffers, and
  // last the int64 sizes of those (the C data interface's own addition).
  out->kind = StringValues::kView;
  out->views = static_cast<const uint8_t*>(a.buffers[1]);
  if (out->views == nullptr) return bad("the views buffer is missing");
  const int64_t data_buffers = a.n_buffers - 3;
  const void* sizes = a.buffers[a.n_buffers - 1];
  if (data_buffers > 0 && sizes == nullptr) return bad("the buffer sizes (the last buffer) are missing");
  out->view_data = a.buffers + 2;
  for (int64_t slot = first_slot; slot < first_slot + slots; ++slot) {
    if (!out->Valid(slot)) continue;
    const uint8_t* view = out->views + 16 * slot;
    int32_t length, buffer, offset;
    std::memcpy(&length, view, 4);
    std::memcpy(&buffer, view + 8, 4);
    std::memcpy(&offset, view + 12, 4);
    auto bad_row = [&](std::string what) { return bad_slot(slot, std::move(what)); };
    if (length < 0) return bad_row("a string view of negative length " + std::to_string(length));
    if (length <= 12) continue;
    if (buffer < 0 || buffer >= data_buffers) {
      return bad_row("a string view names data buffer " + std::to_string(buffer) + " of " +
                     std::to_string(data_buffers));
    }
    if (out->view_data[buffer] == nullptr) return bad_row("data buffer " + std::to_string(buffer) + " is missing");
    int64_t end;
    const auto size = Load<int64_t>(sizes, buffer);
    if (offset < 0 || !Add(offset, length, &end) || end > size) {
      return bad_row("a string view of bytes " + std::to_string(offset) + "+" + std::to_string(length) +
                     " lies past the end of its data buffer (" + std::to_string(size) + " bytes)");
    }
  }
  return Status::OK();
}

// Checks the batch along the path to the column before any value is read.
// Slots: row r of the batch is slot (offset + r) of the batch's struct, and
// slot s of a struct is row s of its child, whose own offset adds to it.
Status ArrowStreamTextColumn::CheckBatch() {
  auto bad = [&](std::string what) { return Status::Corruption(BatchContext() + what); };
  const ArrowArray& top = batch_;
  if (top.length < 0 || top.offset < 0) {
    return bad("a negative length or offset (" + std::to_string(top.length) + ", " + std::to_string(top.offset) + ")");
  }
  batch_rows_ = top.length;
  levels_.clear();
  const ArrowArray* array = &top;
  int64_t slot = top.offset;  // the slot of the batch's row 0 in `array`
  int64_t end;
  if (!Add(slot, batch_rows_, &end)) return bad("the offset and length overflow");
  for (size_t depth = 0; depth + 1 < schema_path_.size(); ++depth) {
    const ArrowSchema& s = *schema_path_[depth];
    const std::string where = depth == 0 ? std::string("the batch: ") : "struct level " + std::to_string(depth) + ": ";
    if (array->n_children != s.n_children) {
      return bad(where + std::to_string(array->n_children) + " children where the schema has " +
                 std::to_string(s.n_children));
    }
    if (array->n_buffers != 1 || array->buffers == nullptr) {
      return bad(where + "a struct array with " + std::to_string(array->n_buffers) + " buffers, not 1 (validity)");
    }
    if (array->children == nullptr) return bad(where + "the children are missing");
    if (array->null_count > 0 && array->buffers[0] == nullptr) {
      return bad(where + std::to_string(array->null_count) + " nulls but no validity bitmap");
    }
    levels_.push_back(Level{static_cast<const uint8_t*>(array->buffers[0]), slot});
    const ArrowArray* child = array->children[child_path_[depth]];
    if (child == nullptr) return bad(where + "child " + std::to_string(child_path_[depth]) + " is missing");
    if (child->length < 0 || child->offset < 0) return bad(where + "a child has a negative length or offset");
    if (child->length < end) {
      return bad(where + "the child '" + std::string(Name(*schema_path_[depth + 1])) + "' has " +
                 std::to_string(child->length) + " rows, fewer than the " + std::to_string(end) +
                 " its parent's offset and length need");
    }
    array = child;
    if (!Add(slot, child->offset, &slot) || !Add(slot, batch_rows_, &end)) return bad("offsets overflow");
  }
  leaf_slot_ = slot;
  const ArrowSchema& column = *schema_path_.back();
  if (column.dictionary == nullptr) {
    if (array->dictionary != nullptr) return bad("the column has a dictionary the schema does not declare");
    return CheckStringArray(*array, column, slot, batch_rows_, /*dictionary=*/false, values_.get());
  }
  // A dictionary: the indices here, the strings in array->dictionary.
  if (array->dictionary == nullptr) return bad("the dictionary is missing");
  if (array->n_buffers != 2 || array->buffers == nullptr || array->n_children != 0) {
    return bad("a dictionary index array with " + std::to_string(array->n_buffers) + " buffers and " +
               std::to_string(array->n_children) + " children, not 2 and 0");
  }
  if (array->null_count > 0 && array->buffers[0] == nullptr) {
    return bad(std::to_string(array->null_count) + " null indices but no validity bitmap");
  }
  if (batch_rows_ > 0 && array->buffers[1] == nullptr) return bad("the index buffer is missing");
  if (end > kMaxSlot) {
    return bad("the offset and length (" + std::to_string(slot) + ", " + std::to_string(batch_rows_) +
               ") address more than 2^63 bytes");
  }
  const ArrowArray& dict = *array->dictionary;
  int64_t dict_end;
  if (dict.length < 0 || dict.offset < 0 || !Add(dict.offset, dict.length, &dict_end)) {
    return bad("the dictionary has a negative length or offset");
  }
  TF_RETURN_IF_ERROR(
      CheckStringArray(dict, *column.dictionary, dict.offset, dict.length, /*dictionary=*/true, values_.get()));
  indices_ = array;
  // Indices are checked where the row is not null (under a null they may be anything).
  const auto* validity = static_cast<const uint8_t*>(array->buffers[0]);
  for (int64_t r = 0; r < batch_rows_; ++r) {
    const int64_t s = slot + r;
    if (validity != nullptr && !BitSet(validity, s)) continue;
    bool fits;
    const int64_t index = ReadIndex(array->buffers[1], index_format_, s, &fits);
    if (!fits || index < 0 || index >= dict.length) {
      const std::string shown = fits ? std::to_string(index) : std::to_string(static_cast<uint64_t>(index));
      return Status::Corruption(BatchContext(r) + "dictionary index " + shown + " is outside the dictionary's " +
                                std::to_string(dict.length) + " values");
    }
  }
  return Status::OK();
}

Result<bool> ArrowStreamTextColumn::NextBatch() {
  for (;;) {
    ReleaseBatch();
    batch_first_row_ = rows_;
    row_in_batch_ = 0;
    batch_rows_ = 0;
    ArrowArray next{};
    const int rc = stream_.get_next(&stream_, &next);
    if (rc != 0) {
      done_ = true;  // `next` is not valid after an error: nothing to release
      const char* why = stream_.get_last_error(&stream_);
      return Status::IoError("'" + name_ + "': the producer failed to give batch " + std::to_string(batches_) +
                             " (error " + std::to_string(rc) + ": " + (why ? why : "no message") + ")");
    }
    if (next.release == nullptr) {
      done_ = true;
      return false;
    }
    batch_ = next;
    ++batches_;
    if (Status s = CheckBatch(); !s.ok()) {
      done_ = true;
      ReleaseBatch();
      return s;
    }
    if (batch_rows_ > 0) return true;
  }
}

Result<bool> ArrowStreamTextColumn::Next(Row* row) {
  if (done_) return false;
  if (row_in_batch_ == batch_rows_) {
    TF_ASSIGN_OR_RETURN(bool got, NextBatch());
    if (!got) return false;
  }
  const int64_t r = row_in_batch_++;
  row->index = rows_++;
  row->row_group = batches_ - 1;
  row->text.reset();
  for (const Level& level : levels_) {
    if (level.validity != nullptr && !BitSet(level.validity, level.first_slot + r)) return true;
  }
  int64_t slot = leaf_slot_ + r;
  if (indices_ != nullptr) {
    const auto* validity = static_cast<const uint8_t*>(indices_->buffers[0]);
    if (validity != nullptr && !BitSet(validity, slot)) return true;
    bool fits;
    slot = ReadIndex(indices_->buffers[1], index_format_, slot, &fits);
    slot += values_->first_slot;
  }
  if (!values_->Valid(slot)) return true;
  row->text = values_->At(slot);
  text_bytes_ += row->text->size();
  return true;
}

}  // namespace tokenfeed::text
