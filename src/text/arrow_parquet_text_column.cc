// TableTextColumn over Apache Arrow's C++ Parquet reader, in the plugin
// libtokenfeed_arrow.so (arrow_plugin.cc): Parquet's exceptions and Arrow's
// Status become tokenfeed Statuses here. An "s3://" path is read through the
// plugin's S3 client (arrow_s3_filesystem.h) by ranged reads.
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include <sys/stat.h>

#include <cerrno>
#include <exception>
#include <vector>

#include "text/arrow_s3_filesystem.h"
#include "text/arrow_string_values.h"
#include "text/arrow_table_readers.h"
#include "text/s3_uri.h"

namespace tokenfeed::text::arrow_plugin {
namespace {

std::string ColumnList(const std::vector<parquet::arrow::SchemaField>& fields) {
  std::string list;
  for (const auto& f : fields) {
    if (!list.empty()) list += ", ";
    list += f.field->name();
  }
  return list.empty() ? "none" : list;
}

struct Impl {
  std::string path;
  std::vector<std::string> steps;  // names below the top-level column, to the string leaf
  std::unique_ptr<parquet::arrow::FileReader> reader;
  std::unique_ptr<arrow::RecordBatchReader> batches;
  std::vector<uint64_t> group_starts;  // first row of each row group, then the row count
  uint64_t file_bytes = 0;
  std::shared_ptr<arrow::Array> values;  // the current batch's string array
  int64_t in_batch = 0;
  uint64_t next_row = 0;  // file row index of values[in_batch]
  uint64_t skip = 0;      // rows still to pass over before first_row
  uint32_t group = 0;     // row group of next_row

  Status ReadBatch(bool* got);
};

class ArrowParquetTextColumn final : public TableTextColumn {
 public:
  explicit ArrowParquetTextColumn(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
  Result<bool> Next(Row* row) override;
  uint64_t rows() const override { return impl_->group_starts.back(); }
  uint32_t row_groups() const override { return static_cast<uint32_t>(impl_->group_starts.size() - 1); }
  uint64_t file_bytes() const override { return impl_->file_bytes; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace

Result<std::unique_ptr<TableTextColumn>> OpenParquetTextColumn(const std::string& path, std::string_view field,
                                                               uint64_t first_row, size_t batch_rows) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  try {
    std::shared_ptr<arrow::io::RandomAccessFile> file;
    if (IsS3Uri(path)) {
      // Ranged reads of the footer, then of the column's chunks.
      TF_RETURN_IF_ERROR(OpenS3File(path, &file, &impl->file_bytes));
    } else {
      // The system's reason (NotFound, permission) before Arrow's wording of it.
      if (struct stat st; ::stat(path.c_str(), &st) != 0) return Status::FromErrno(errno, "open", path);
      auto local = arrow::io::ReadableFile::Open(path);
      if (!local.ok()) return FromArrow(local.status(), path, "cannot open it");
      auto size = (*local)->GetSize();
      if (!size.ok()) return FromArrow(size.status(), path, "cannot read its size");
      impl->file_bytes = static_cast<uint64_t>(*size);
      file = *local;
    }
    std::unique_ptr<parquet::ParquetFileReader> parquet_reader;
    try {
      parquet_reader = parquet::ParquetFileReader::Open(file);
    } catch (const std::exception& e) {
      return Status::Corruption("'" + path + "': not a readable Parquet file (" + e.what() + ")");
    }
    const std::shared_ptr<parquet::FileMetaData> meta = parquet_reader->metadata();
    impl->group_starts.reserve(static_cast<size_t>(meta->num_row_groups()) + 1);
    uint64_t rows = 0;
    for (int g = 0; g < meta->num_row_groups(); ++g) {
      impl->group_starts.push_back(rows);
      const int64_t n = meta->RowGroup(g)->num_rows();
      if (n < 0) {
        return Status::Corruption("'" + path + "': row group " + std::to_string(g) + " has a negative row count");
      }
      rows += static_cast<uint64_t>(n);
    }
    impl->group_starts.push_back(rows);

    parquet::ArrowReaderProperties props(/*use_threads=*/false);
    props.set_batch_size(static_cast<int64_t>(batch_rows == 0 ? 1 : batch_rows));
    auto made = parquet::arrow::FileReader::Make(arrow::default_memory_pool(), std::move(parquet_reader), props);
    if (!made.ok()) return FromArrow(made.status(), path, "cannot read its schema");
    impl->reader = std::move(*made);

    // The column: a top-level name first (a column may be named "meta.url"),
    // then a dotted path into struct columns.
    const auto& top = impl->reader->manifest().schema_fields;
    const parquet::arrow::SchemaField* at = nullptr;
    for (const auto& f : top) {
      if (f.field->name() == field) {
        at = &f;
        break;
      }
    }
    if (at == nullptr) {
      std::vector<std::string> parts = SplitDots(field);
      const std::vector<parquet::arrow::SchemaField>* level = &top;
      std::string walked;
      for (size_t k = 0; k < parts.size(); ++k) {
        const parquet::arrow::SchemaField* next = nullptr;
        for (const auto& f : *level) {
          if (f.field->name() == parts[k]) {
            next = &f;
            break;
          }
        }
        if (next == nullptr) {
          return Status::InvalidArgument(
              "'" + path + "' has no column '" + std::string(field) + "'" +
              (walked.empty() ? " (its columns: " + ColumnList(top) + ")"
                              : " ('" + walked + "' has the fields: " + ColumnList(*level) + ")") +
              "; give the text column with --field");
        }
        if (k > 0) impl->steps.push_back(parts[k]);
        if (k + 1 < parts.size() && next->field->type()->id() != arrow::Type::STRUCT) {
          return Status::InvalidArgument("'" + path + "': column '" + std::string(field) + "': '" +
                                         (walked.empty() ? parts[k] : walked + "." + parts[k]) + "' is " +
                                         next->field->type()->ToString() + ", not a struct with a field '" +
                                         parts[k + 1] + "'");
        }
        walked += (walked.empty() ? "" : ".") + parts[k];
        at = next;
        level = &next->children;
      }
    }
    if (!at->is_leaf() || !IsStringType(*at->field->type())) {
      return Status::InvalidArgument("'" + path + "': column '" + std::string(field) + "' is " +
                                     at->field->type()->ToString() +
                                     ", not a string column; give the text column with --field");
    }

    if (first_row > rows) {
      return Status::InvalidArgument("'" + path + "': resume point names row " + std::to_string(first_row) +
                                     " but the file has " + std::to_string(rows) +
                                     " rows; it changed since the point was recorded");
    }
    // Start at the row group holding first_row and pass over the rows before it.
    uint32_t g = 0;
    while (g + 1 < impl->group_starts.size() && impl->group_starts[g + 1] <= first_row) ++g;
    impl->group = g;
    impl->next_row = impl->group_starts[g];
    impl->skip = first_row - impl->group_starts[g];
    std::vector<int> groups;
    for (int i = static_cast<int>(g); i < meta->num_row_groups(); ++i) groups.push_back(i);
    if (!groups.empty()) {
      auto batches = impl->reader->GetRecordBatchReader(groups, {at->column_index});
      if (!batches.ok()) return FromArrow(batches.status(), path, "cannot read column '" + std::string(field) + "'");
      impl->batches = std::move(*batches);
    }
  } catch (const std::exception& e) {
    return Status::Corruption("'" + path + "': not a readable Parquet file (" + e.what() + ")");
  }
  return std::unique_ptr<TableTextColumn>(new ArrowParquetTextColumn(std::move(impl)));
}

Status Impl::ReadBatch(bool* got) {
  *got = false;
  values.reset();
  in_batch = 0;
  if (!batches) return Status::OK();
  std::shared_ptr<arrow::RecordBatch> batch;
  if (arrow::Status s = batches->ReadNext(&batch); !s.ok()) {
    return FromArrow(s, path, "cannot read row group " + std::to_string(group));
  }
  if (!batch) return Status::OK();
  if (batch->num_columns() != 1) {
    return Status::Corruption("'" + path + "': the reader returned " + std::to_string(batch->num_columns()) +
                              " columns for one");
  }
  TF_ASSIGN_OR_RETURN(std::shared_ptr<arrow::Array> array, StringColumn(batch->column(0), steps, path));
  values = std::move(array);
  *got = true;
  return Status::OK();
}

Result<bool> ArrowParquetTextColumn::Next(Row* row) {
  Impl& m = *impl_;
  try {
    for (;;) {
      while (!m.values || m.in_batch >= m.values->length()) {
        bool got = false;
        TF_RETURN_IF_ERROR(m.ReadBatch(&got));
        if (!got) {
          if (m.next_row != m.group_starts.back()) {
            return Status::Corruption("'" + m.path + "': the row groups held " + std::to_string(m.next_row) +
                                      " rows, but its metadata says " + std::to_string(m.group_starts.back()));
          }
          return false;
        }
      }
      while (m.group + 1 < m.group_starts.size() && m.group_starts[m.group + 1] <= m.next_row) ++m.group;
      const int64_t i = m.in_batch++;
      const uint64_t index = m.next_row++;
      if (m.skip > 0) {
        --m.skip;
        continue;
      }
      row->text = StringValue(*m.values, i);
      row->index = index;
      row->row_group = m.group;
      return true;
    }
  } catch (const std::exception& e) {
    return Status::Corruption("'" + m.path + "': row group " + std::to_string(m.group) + ": " + e.what());
  }
}

}  // namespace tokenfeed::text::arrow_plugin
