// TableTextColumn::Open: calls the Arrow plugin's entry point
// (arrow_plugin_loader.h loads it).
#include "text/table_text_column.h"

#include "text/arrow_plugin_loader.h"

namespace tokenfeed::text {

bool TableTextColumn::Available() { return ArrowPluginBuilt(); }

Status TableTextColumn::Usable() {
  std::string why;
  if (ArrowPluginUsable(&why)) return Status::OK();
  return Status::Unsupported(why);
}

Result<std::unique_ptr<TableTextColumn>> TableTextColumn::Open(const std::string& path, TableFormat format,
                                                               std::string_view field, uint64_t first_row,
                                                               size_t batch_rows) {
  if (ArrowPluginBuilt()) {
    std::string why;
    void* entry = FindArrowPluginSymbol(kTableOpenSymbol, &why);
    if (entry == nullptr) return Status::Unsupported("'" + path + "': " + why);
    std::unique_ptr<TableTextColumn> column;
    TF_RETURN_IF_ERROR(
        reinterpret_cast<TableOpenFunction>(entry)(path, format, field, first_row, batch_rows, &column));
    return column;
  }
  return Status::Unsupported("'" + path +
                             "': Parquet support (Parquet and Arrow IPC files) was not built in (build tokenfeed "
                             "with -DTOKENFEED_WITH_PARQUET=ON; docs/ingest.md), or export the text as JSONL");
}

}  // namespace tokenfeed::text
