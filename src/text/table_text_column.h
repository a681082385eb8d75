// TableTextColumn: the values of one string column of a table file — a
// Parquet file (every row group in file order, any compression and encoding
// Arrow's reader knows) or an Arrow IPC file (Feather v2; its record batches
// stand for row groups) — row by row from a given row, a bounded batch at a
// time. The column is named like a JSONL field: a top-level column name (dots
// allowed), or a dotted path into struct columns. Other columns are not read.
// It is not a document reader (DocumentReader turns rows into documents).
// The Arrow code lives in a plugin, libtokenfeed_arrow.so
// (arrow_parquet_text_column.cc, arrow_ipc_text_column.cc), loaded on first
// use with its own symbol scope: Arrow's libraries export copies of simdjson,
// OpenSSL and others that must not replace tokenfeed's. Built without it
// (CMake option TOKENFEED_WITH_PARQUET), or when the plugin cannot be loaded,
// Open says so. Views are valid until the next Next; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "tokenfeed/status.h"

namespace tokenfeed::text {

enum class TableFormat : uint8_t {
  kParquet,
  kArrowIpc,  // the IPC file format ("ARROW1"), not the stream format
};

class TableTextColumn {
 public:
  // Whether this build reads table files at all (the plugin is loaded by Open).
  static bool Available();

  // In a build that reads them, whether table files can be read here: OK
  // when the plugin loads (loading it), else Unsupported saying why and what
  // to do (pyarrow 25.0.x missing from the installed package's environment).
  static Status Usable();

  // Opens `path` and finds `field`, positioned before row `first_row`
  // (0-based, counted across row groups; equal to the row count: nothing
  // left). Errors name the file: Unsupported without support, NotFound or
  // IoError for the file, Corruption for one that is not of the format,
  // InvalidArgument for a missing or non-string column (listing the columns)
  // or a first_row past the end.
  static Result<std::unique_ptr<TableTextColumn>> Open(const std::string& path, TableFormat format,
                                                       std::string_view field, uint64_t first_row,
                                                       size_t batch_rows = 1024);
  virtual ~TableTextColumn() = default;
  TableTextColumn(const TableTextColumn&) = delete;
  TableTextColumn& operator=(const TableTextColumn&) = delete;

  struct Row {
    std::optional<std::string_view> text;  // nullopt: the value (or a struct above it) is null
    uint64_t index = 0;                    // 0-based row index in the file
    uint32_t row_group = 0;                // Arrow IPC: the record batch
  };
  // The next row; false after the last. An error names the file and row group.
  virtual Result<bool> Next(Row* row) = 0;

  virtual uint64_t rows() const = 0;  // in the whole file
  virtual uint32_t row_groups() const = 0;
  virtual uint64_t file_bytes() const = 0;

 protected:
  TableTextColumn() = default;
};

// The plugin's one entry point, looked up by this name. Same compiler and
// standard library on both sides (one build makes both).
using TableOpenFunction = Status (*)(const std::string& path, TableFormat format, std::string_view field,
                                     uint64_t first_row, size_t batch_rows, std::unique_ptr<TableTextColumn>* out);
inline constexpr const char* kTableOpenSymbol = "tokenfeed_table_open";

}  // namespace tokenfeed::text
