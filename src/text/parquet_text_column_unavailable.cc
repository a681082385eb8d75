// ParquetTextColumn in a build without Parquet support (TOKENFEED_WITH_PARQUET
// off or Arrow not found): every Open says so.
#include "text/parquet_text_column.h"

namespace tokenfeed::text {

struct ParquetTextColumn::Impl {};

bool ParquetTextColumn::Available() { return false; }

Result<std::unique_ptr<ParquetTextColumn>> ParquetTextColumn::Open(const std::string& path, std::string_view,
                                                                   uint64_t, size_t) {
  return Status::Unsupported("'" + path +
                             "': Parquet support was not built in (build tokenfeed with "
                             "-DTOKENFEED_WITH_PARQUET=ON; docs/ingest.md), or export the text as JSONL");
}

ParquetTextColumn::ParquetTextColumn(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ParquetTextColumn::~ParquetTextColumn() = default;
Result<bool> ParquetTextColumn::Next(Row*) { return Status::Internal("ParquetTextColumn without Parquet support"); }
uint64_t ParquetTextColumn::rows() const { return 0; }
uint32_t ParquetTextColumn::row_groups() const { return 0; }
uint64_t ParquetTextColumn::file_bytes() const { return 0; }

}  // namespace tokenfeed::text
