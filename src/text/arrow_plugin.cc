// libtokenfeed_arrow.so's entry point (TableOpenFunction, table_text_column.h):
// the one symbol it exports; everything else is hidden.
#include <exception>

#include "text/arrow_table_readers.h"

extern "C" __attribute__((visibility("default"))) tokenfeed::Status tokenfeed_table_open(
    const std::string& path, tokenfeed::text::TableFormat format, std::string_view field, uint64_t first_row,
    size_t batch_rows, std::unique_ptr<tokenfeed::text::TableTextColumn>* out) {
  using namespace tokenfeed::text;
  try {
    auto opened = format == TableFormat::kParquet
                      ? arrow_plugin::OpenParquetTextColumn(path, field, first_row, batch_rows)
                      : arrow_plugin::OpenArrowIpcTextColumn(path, field, first_row, batch_rows);
    if (!opened.ok()) return opened.status();
    *out = std::move(*opened);
    return tokenfeed::Status::OK();
  } catch (const std::exception& e) {
    return tokenfeed::Status::Corruption("'" + path + "': " + e.what());
  }
}
