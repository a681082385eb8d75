// TableTextColumn over an Arrow IPC file (the "ARROW1" file format, Feather
// v2), in the plugin libtokenfeed_arrow.so (arrow_plugin.cc). The file is
// memory-mapped (an object in S3 is read by ranged reads,
// arrow_s3_filesystem.h) and read one record batch at a time (a batch stands for a row
// group; uncompressed batches are not copied, LZ4/zstd ones are decompressed
// whole). The rows before a resume point are passed over batch by batch.
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/ipc/reader.h>

#include <sys/stat.h>

#include <cerrno>
#include <vector>

#include "text/arrow_s3_filesystem.h"
#include "text/arrow_string_values.h"
#include "text/arrow_table_readers.h"
#include "text/s3_uri.h"

namespace tokenfeed::text::arrow_plugin {
namespace {

std::string FieldList(const arrow::FieldVector& fields) {
  std::string list;
  for (const auto& f : fields) {
    if (!list.empty()) list += ", ";
    list += f->name();
  }
  return list.empty() ? "none" : list;
}

class ArrowIpcTextColumn final : public TableTextColumn {
 public:
  Result<bool> Next(Row* row) override;
  uint64_t rows() const override { return rows_; }
  uint32_t row_groups() const override { return static_cast<uint32_t>(reader_->num_record_batches()); }
  uint64_t file_bytes() const override { return file_bytes_; }

  std::string path_;
  int top_ = -1;                    // the top-level column
  std::vector<std::string> steps_;  // struct fields below it
  std::shared_ptr<arrow::io::RandomAccessFile> file_;  // memory-mapped, or an object in S3
  std::shared_ptr<arrow::ipc::RecordBatchFileReader> reader_;
  uint64_t rows_ = 0;
  uint64_t file_bytes_ = 0;
  int next_batch_ = 0;
  std::shared_ptr<arrow::Array> values_;  // the current batch's string array
  int64_t in_batch_ = 0;
  uint64_t next_row_ = 0;  // file row index of values_[in_batch_]
  uint64_t skip_ = 0;      // rows still to pass over before the first row asked for
};

Result<bool> ArrowIpcTextColumn::Next(Row* row) {
  for (;;) {
    while (!values_ || in_batch_ >= values_->length()) {
      if (next_batch_ >= reader_->num_record_batches()) return false;
      const int b = next_batch_++;
      auto batch = reader_->ReadRecordBatch(b);
      if (!batch.ok()) return FromArrow(batch.status(), path_, "cannot read record batch " + std::to_string(b));
      const auto n = static_cast<uint64_t>((*batch)->num_rows());
      in_batch_ = 0;
      values_.reset();
      if (skip_ >= n) {  // the whole batch is before the first row: not decoded further
        skip_ -= n;
        next_row_ += n;
        continue;
      }
      if ((*batch)->num_columns() <= top_) {
        return Status::Corruption("'" + path_ + "': record batch " + std::to_string(b) + " has " +
                                  std::to_string((*batch)->num_columns()) + " columns, fewer than its schema");
      }
      TF_ASSIGN_OR_RETURN(values_, StringColumn((*batch)->column(top_), steps_, path_));
    }
    const int64_t i = in_batch_++;
    const uint64_t index = next_row_++;
    if (skip_ > 0) {
      --skip_;
      continue;
    }
    row->text = StringValue(*values_, i);
    row->index = index;
    row->row_group = static_cast<uint32_t>(next_batch_ - 1);
    return true;
  }
}

}  // namespace

Result<std::unique_ptr<TableTextColumn>> OpenArrowIpcTextColumn(const std::string& path, std::string_view field,
                                                                uint64_t first_row, size_t /*batch_rows*/) {
  auto column = std::make_unique<ArrowIpcTextColumn>();
  column->path_ = path;
  if (IsS3Uri(path)) {
    TF_RETURN_IF_ERROR(OpenS3File(path, &column->file_, &column->file_bytes_));
  } else {
    if (struct stat st; ::stat(path.c_str(), &st) != 0) return Status::FromErrno(errno, "open", path);
    auto file = arrow::io::MemoryMappedFile::Open(path, arrow::io::FileMode::READ);
    if (!file.ok()) return FromArrow(file.status(), path, "cannot open it");
    column->file_ = *file;
    auto size = column->file_->GetSize();
    if (!size.ok()) return FromArrow(size.status(), path, "cannot read its size");
    column->file_bytes_ = static_cast<uint64_t>(*size);
  }
  auto reader = arrow::ipc::RecordBatchFileReader::Open(column->file_);
  if (!reader.ok()) {
    return Status::Corruption("'" + path + "': not a readable Arrow IPC file (" + reader.status().ToString() + ")");
  }
  column->reader_ = *reader;
  auto rows = column->reader_->CountRows();
  if (!rows.ok()) return FromArrow(rows.status(), path, "cannot count its rows");
  column->rows_ = static_cast<uint64_t>(*rows);

  // The column: a top-level name first (dots allowed), then a dotted path
  // into struct columns.
  const arrow::Schema& schema = *column->reader_->schema();
  std::shared_ptr<arrow::Field> at;
  column->top_ = schema.GetFieldIndex(std::string(field));
  if (column->top_ >= 0) {
    at = schema.field(column->top_);
  } else {
    std::vector<std::string> parts = SplitDots(field);
    const arrow::FieldVector* level = &schema.fields();
    std::string walked;
    for (size_t k = 0; k < parts.size(); ++k) {
      std::shared_ptr<arrow::Field> next;
      for (size_t i = 0; i < level->size(); ++i) {
        if ((*level)[i]->name() == parts[k]) {
          next = (*level)[i];
          if (k == 0) column->top_ = static_cast<int>(i);
          break;
        }
      }
      if (!next) {
        return Status::InvalidArgument(
            "'" + path + "' has no column '" + std::string(field) + "'" +
            (walked.empty() ? " (its columns: " + FieldList(schema.fields()) + ")"
                            : " ('" + walked + "' has the fields: " + FieldList(*level) + ")") +
            "; give the text column with --field");
      }
      if (k > 0) column->steps_.push_back(parts[k]);
      if (k + 1 < parts.size() && next->type()->id() != arrow::Type::STRUCT) {
        return Status::InvalidArgument("'" + path + "': column '" + std::string(field) + "': '" +
                                       (walked.empty() ? parts[k] : walked + "." + parts[k]) + "' is " +
                                       next->type()->ToString() + ", not a struct with a field '" + parts[k + 1] +
                                       "'");
      }
      walked += (walked.empty() ? "" : ".") + parts[k];
      at = next;
      level = &next->type()->fields();
    }
  }
  if (!IsStringType(*at->type())) {
    return Status::InvalidArgument("'" + path + "': column '" + std::string(field) + "' is " +
                                   at->type()->ToString() + ", not a string column; give the text column with --field");
  }
  if (first_row > column->rows_) {
    return Status::InvalidArgument("'" + path + "': resume point names row " + std::to_string(first_row) +
                                   " but the file has " + std::to_string(column->rows_) +
                                   " rows; it changed since the point was recorded");
  }
  column->skip_ = first_row;
  return std::unique_ptr<TableTextColumn>(std::move(column));
}

}  // namespace tokenfeed::text::arrow_plugin
