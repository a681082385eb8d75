// ArrowStreamTextColumn: the string column of an Arrow C stream
// (arrow_c_stream.h: record batches that another library in this process,
// such as pyarrow, polars or DuckDB, hands over) as a TableTextColumn, row by
// row, each text a view into the batch's own buffers: nothing is copied. The
// batches stand for row groups. The column is found as in a table file (a
// top-level column name, dots allowed, else a dotted path into struct columns;
// a null struct makes its fields null) and is utf8, large utf8, string_view or
// a dictionary of them. It is not Arrow: no Arrow library is used, and what
// the producer hands over is checked before it is read (buffers present,
// buffer and child counts, offsets non-decreasing and within the parent,
// dictionary indices in range): a violation is Corruption naming the batch and
// row (or the dictionary value). Buffers need not be aligned (the interface
// only recommends it). Buffer sizes are not part of the interface, so a
// producer that lies about them (offsets past the end of the data) cannot be
// caught.
// It owns the stream and releases it, its schema and every batch exactly once
// (a batch when the next is fetched or the column is destroyed). A stream is
// read once, from its start. The stream's callbacks run on the thread that
// calls Open, Next and the destructor. Views are valid until the next Next;
// not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "text/arrow_c_stream.h"
#include "text/table_text_column.h"
#include "tokenfeed/status.h"

namespace tokenfeed::text {

class ArrowStreamTextColumn final : public TableTextColumn {
 public:
  // Takes `*stream` over (moves it: stream->release is null on return, also
  // on error), reads its schema and finds `field`. `name` is how messages
  // (and the ingest's records) name the stream. InvalidArgument for a missing
  // or non-string column (listing the columns) or a stream already released;
  // IoError when the producer fails to give the schema.
  static Result<std::unique_ptr<ArrowStreamTextColumn>> Open(ArrowArrayStream* stream, std::string_view field,
                                                             std::string name = "arrow-stream");
  ~ArrowStreamTextColumn() override;

  // The next row; false after the last. IoError when the producer fails
  // (with its get_last_error), Corruption for a malformed batch; after an
  // error the stream is finished (false).
  Result<bool> Next(Row* row) override;

  // A stream's length is not known ahead: these count what was read so far.
  uint64_t rows() const override { return rows_; }
  uint32_t row_groups() const override { return batches_; }
  uint64_t file_bytes() const override { return text_bytes_; }

 private:
  struct Level;
  struct StringValues;

  ArrowStreamTextColumn(std::string name, std::string field);
  Status ResolveField();
  Result<bool> NextBatch();
  Status CheckBatch();
  Status CheckStringArray(const ArrowArray& array, const ArrowSchema& schema, int64_t first_slot, int64_t slots,
                          bool dictionary, StringValues* out);
  // The start of a message about the current batch (and its row `row`), or
  // about value `value` of the current batch's dictionary.
  std::string BatchContext(int64_t row = -1) const;
  std::string DictionaryContext(int64_t value) const;
  void ReleaseBatch();

  std::string name_;
  std::string field_;
  ArrowArrayStream stream_{};
  ArrowSchema schema_{};
  ArrowArray batch_{};
  // The schema nodes from the batch down to the string (or dictionary) column.
  std::vector<int64_t> child_path_;
  std::vector<const ArrowSchema*> schema_path_;  // [0] the batch's struct, back() the column
  // The current batch, checked.
  std::vector<Level> levels_;  // the batch's struct and the structs below it on the path
  std::unique_ptr<StringValues> values_;      // the string array, or the dictionary's values
  const ArrowArray* indices_ = nullptr;       // a dictionary column's indices (else null)
  char index_format_ = 0;                     // their integer type's format character
  int64_t leaf_slot_ = 0;                     // the column's buffer slot of the batch's row 0
  int64_t row_in_batch_ = 0;
  int64_t batch_rows_ = 0;
  uint64_t batch_first_row_ = 0;
  uint64_t rows_ = 0;
  uint32_t batches_ = 0;
  uint64_t text_bytes_ = 0;
  bool done_ = false;
};

}  // namespace tokenfeed::text
