// ParquetTextColumn: the values of one string column of a Parquet file, row
// by row from a given row, read a bounded batch of rows at a time through
// Apache Arrow's Parquet reader (any compression and encoding it reads, every
// row group in file order). The column is named like a JSONL field: a
// top-level column name (dots allowed), or a dotted path into struct columns.
// Other columns are not read. It is not a document reader (DocumentReader
// turns rows into documents). The Arrow code lives in a plugin,
// libtokenfeed_parquet.so (arrow_parquet_text_column.cc), loaded on first use
// with its own symbol scope: Arrow's libraries export copies of simdjson,
// OpenSSL and others that must not replace tokenfeed's. Built without Parquet
// support (CMake option TOKENFEED_WITH_PARQUET), or when the plugin cannot
// be loaded, Open says so. Views are valid until the next Next; not
// thread-safe: one thread reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "tokenfeed/status.h"

namespace tokenfeed::text {

class ParquetTextColumn {
 public:
  // Whether this build reads Parquet at all (the plugin is loaded by Open).
  static bool Available();

  // Opens `path` and finds `field`, positioned before row `first_row`
  // (0-based, counted across row groups; equal to the row count: nothing
  // left). Errors name the file: Unsupported without Parquet support,
  // NotFound/IoError for the file, Corruption for one that is not Parquet,
  // InvalidArgument for a missing or non-string column (listing the columns)
  // or a first_row past the end.
  static Result<std::unique_ptr<ParquetTextColumn>> Open(const std::string& path, std::string_view field,
                                                         uint64_t first_row, size_t batch_rows = 1024);
  virtual ~ParquetTextColumn() = default;
  ParquetTextColumn(const ParquetTextColumn&) = delete;
  ParquetTextColumn& operator=(const ParquetTextColumn&) = delete;

  struct Row {
    std::optional<std::string_view> text;  // nullopt: the value (or a struct above it) is null
    uint64_t index = 0;                    // 0-based row index in the file
    uint32_t row_group = 0;
  };
  // The next row; false after the last. An error names the file and row group.
  virtual Result<bool> Next(Row* row) = 0;

  virtual uint64_t rows() const = 0;  // in the whole file
  virtual uint32_t row_groups() const = 0;
  virtual uint64_t file_bytes() const = 0;

 protected:
  ParquetTextColumn() = default;
};

// The plugin's one entry point, looked up by this name. Same compiler and
// standard library on both sides (one build makes both).
using ParquetOpenFunction = Status (*)(const std::string& path, std::string_view field, uint64_t first_row,
                                       size_t batch_rows, std::unique_ptr<ParquetTextColumn>* out);
inline constexpr const char* kParquetOpenSymbol = "tokenfeed_parquet_open";

}  // namespace tokenfeed::text
