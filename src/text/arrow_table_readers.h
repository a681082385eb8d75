// The Arrow plugin's table readers, one per format, behind the plugin's entry
// point (arrow_plugin.cc). Plugin-internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "text/table_text_column.h"

namespace tokenfeed::text::arrow_plugin {

Result<std::unique_ptr<TableTextColumn>> OpenParquetTextColumn(const std::string& path, std::string_view field,
                                                               uint64_t first_row, size_t batch_rows);
Result<std::unique_ptr<TableTextColumn>> OpenArrowIpcTextColumn(const std::string& path, std::string_view field,
                                                                uint64_t first_row, size_t batch_rows);

}  // namespace tokenfeed::text::arrow_plugin
