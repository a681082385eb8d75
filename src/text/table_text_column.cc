// TableTextColumn::Open: loads the Arrow plugin (libtokenfeed_arrow.so)
// once, with RTLD_LOCAL | RTLD_DEEPBIND, so that neither side's symbols
// replace the other's (Arrow's libraries export their own simdjson, OpenSSL,
// protobuf...), and calls its entry point.
#include "text/table_text_column.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace tokenfeed::text {
namespace {

#ifdef TOKENFEED_ARROW_PLUGIN
struct Plugin {
  TableOpenFunction open = nullptr;
  std::string error;  // why it could not be loaded
};

const Plugin& LoadPlugin() {
  static Plugin plugin;
  static std::once_flag once;
  std::call_once(once, [] {
    // TOKENFEED_ARROW_PLUGIN in the environment names another copy (an
    // installed one); by default the one this build made.
    const char* env = std::getenv("TOKENFEED_ARROW_PLUGIN");
    const std::string path = env != nullptr && *env != '\0' ? env : TOKENFEED_ARROW_PLUGIN;
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (handle == nullptr) {
      const char* e = ::dlerror();
      plugin.error = "the Arrow plugin " + path + " could not be loaded (" + (e ? e : "unknown error") +
                     "); rebuild tokenfeed, or set TOKENFEED_ARROW_PLUGIN to libtokenfeed_arrow.so";
      return;
    }
    void* entry = ::dlsym(handle, kTableOpenSymbol);
    if (entry == nullptr) {
      plugin.error = "the Arrow plugin " + path + " has no " + kTableOpenSymbol + "; rebuild tokenfeed";
      return;
    }
    plugin.open = reinterpret_cast<TableOpenFunction>(entry);
  });
  return plugin;
}
#endif

}  // namespace

bool TableTextColumn::Available() {
#ifdef TOKENFEED_ARROW_PLUGIN
  return true;
#else
  return false;
#endif
}

Result<std::unique_ptr<TableTextColumn>> TableTextColumn::Open(const std::string& path, TableFormat format,
                                                               std::string_view field, uint64_t first_row,
                                                               size_t batch_rows) {
#ifdef TOKENFEED_ARROW_PLUGIN
  const Plugin& plugin = LoadPlugin();
  if (plugin.open == nullptr) return Status::Unsupported("'" + path + "': " + plugin.error);
  std::unique_ptr<TableTextColumn> column;
  TF_RETURN_IF_ERROR(plugin.open(path, format, field, first_row, batch_rows, &column));
  return column;
#else
  (void)format;
  (void)field;
  (void)first_row;
  (void)batch_rows;
  return Status::Unsupported("'" + path +
                             "': Parquet support (Parquet and Arrow IPC files) was not built in (build tokenfeed "
                             "with -DTOKENFEED_WITH_PARQUET=ON; docs/ingest.md), or export the text as JSONL");
#endif
}

}  // namespace tokenfeed::text
