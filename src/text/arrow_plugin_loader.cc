#include "text/arrow_plugin_loader.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

namespace tokenfeed::text {
namespace {

std::atomic<bool> loaded{false};

#ifdef TOKENFEED_ARROW_PLUGIN
struct Plugin {
  void* handle = nullptr;
  std::string path;
  std::string error;  // why it could not be loaded
};

const Plugin& LoadPlugin() {
  static Plugin plugin;
  static std::once_flag once;
  std::call_once(once, [] {
    // TOKENFEED_ARROW_PLUGIN in the environment names another copy (an
    // installed one); by default the one this build made.
    const char* env = std::getenv("TOKENFEED_ARROW_PLUGIN");
    plugin.path = env != nullptr && *env != '\0' ? env : TOKENFEED_ARROW_PLUGIN;
    plugin.handle = ::dlopen(plugin.path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    loaded.store(plugin.handle != nullptr);
    if (plugin.handle == nullptr) {
      const char* e = ::dlerror();
      plugin.error = "the Arrow plugin " + plugin.path + " could not be loaded (" + (e ? e : "unknown error") +
                     "); rebuild tokenfeed, or set TOKENFEED_ARROW_PLUGIN to libtokenfeed_arrow.so";
    }
  });
  return plugin;
}
#endif

}  // namespace

bool ArrowPluginBuilt() {
#ifdef TOKENFEED_ARROW_PLUGIN
  return true;
#else
  return false;
#endif
}

bool ArrowPluginLoaded() { return loaded.load(); }

void* FindArrowPluginSymbol(const char* symbol, std::string* why) {
#ifdef TOKENFEED_ARROW_PLUGIN
  const Plugin& plugin = LoadPlugin();
  if (plugin.handle == nullptr) {
    *why = plugin.error;
    return nullptr;
  }
  void* entry = ::dlsym(plugin.handle, symbol);
  if (entry == nullptr) *why = "the Arrow plugin " + plugin.path + " has no " + symbol + "; rebuild tokenfeed";
  return entry;
#else
  *why = "the Arrow plugin was not built (build tokenfeed with -DTOKENFEED_WITH_PARQUET=ON; docs/ingest.md)";
  (void)symbol;
  return nullptr;
#endif
}

}  // namespace tokenfeed::text
