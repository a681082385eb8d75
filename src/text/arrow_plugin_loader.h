// The core's side of the Arrow plugin, libtokenfeed_arrow.so: it is loaded
// once, on first use, with RTLD_LOCAL | RTLD_DEEPBIND, so that neither side's
// symbols replace the other's (Arrow's libraries export their own simdjson,
// OpenSSL, protobuf...), and its entry points are looked up by name
// (table_text_column.h, object_store.h). The plugin file is found by
// TOKENFEED_ARROW_PLUGIN, else next to the module or program that holds this
// code (the wheel's tokenfeed/), else in the build tree that made it; it
// links pyarrow's libarrow by SONAME, so an install without pyarrow 25.x is
// told to add it (docs/ingest.md, "The Arrow plugin"). It is not the plugin
// itself and never unloads it. Any thread; the load happens once.
#pragma once

#include <string>

namespace tokenfeed::text {

// Whether this build made the plugin (CMake option TOKENFEED_WITH_PARQUET).
bool ArrowPluginBuilt();

// Whether the plugin has been loaded in this process (by an earlier lookup).
bool ArrowPluginLoaded();

// Loads the plugin (once) and says whether it loaded; when not, `*why` says
// why (not built, not found, or pyarrow's libraries missing) and what to do.
bool ArrowPluginUsable(std::string* why);

// The address of the plugin's `symbol`, or nullptr with `*why` saying why
// (not built, cannot be loaded, no such symbol) and what to do.
void* FindArrowPluginSymbol(const char* symbol, std::string* why);

}  // namespace tokenfeed::text
