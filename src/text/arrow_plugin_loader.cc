#include "text/arrow_plugin_loader.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace tokenfeed::text {
namespace {

std::atomic<bool> loaded{false};

#ifdef TOKENFEED_ARROW_PLUGIN_FILE
struct Plugin {
  void* handle = nullptr;
  std::string path;
  std::string error;  // why it could not be loaded
};

// The directory of the file that holds this code: the Python module
// (tokenfeed/_ext*.so) or the program (tokenfeed/_bin/tokenfeed, or a build
// tree's). Empty when it cannot be told.
std::string DirectoryOfThisCode() {
  Dl_info info{};
  link_map* map = nullptr;
  if (::dladdr1(reinterpret_cast<void*>(&DirectoryOfThisCode), &info, reinterpret_cast<void**>(&map),
                RTLD_DL_LINKMAP) == 0) {
    return "";
  }
  std::string file;
  if (map != nullptr && map->l_name != nullptr && map->l_name[0] != '\0') {
    file = map->l_name;
  } else {
    // The main program has no name in its link map (and dli_fname is only
    // argv[0]): ask the kernel.
    char exe[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) return "";
    file.assign(exe, static_cast<size_t>(n));
  }
  char resolved[PATH_MAX];
  if (::realpath(file.c_str(), resolved) != nullptr) file = resolved;
  size_t slash = file.rfind('/');
  return slash == std::string::npos ? "" : file.substr(0, slash);
}

// Where the plugin is looked for, in order: TOKENFEED_ARROW_PLUGIN (a file);
// next to the code that loads it (the wheel's tokenfeed/ for the module);
// one directory up (tokenfeed/ for the wheel's tokenfeed/_bin/tokenfeed); the
// copy a build tree made. The first that exists is loaded, and only it: a
// copy that exists but does not load is an error, not a reason to try an
// older one elsewhere.
std::vector<std::string> Candidates() {
  const char* env = std::getenv("TOKENFEED_ARROW_PLUGIN");
  if (env != nullptr && *env != '\0') return {env};
  std::vector<std::string> paths;
  if (std::string dir = DirectoryOfThisCode(); !dir.empty()) {
    paths.push_back(dir + "/" TOKENFEED_ARROW_PLUGIN_FILE);
    if (size_t slash = dir.rfind('/'); slash != std::string::npos) {
      paths.push_back(dir.substr(0, slash) + "/" TOKENFEED_ARROW_PLUGIN_FILE);
    }
  }
#ifdef TOKENFEED_ARROW_PLUGIN_BUILD_PATH
  paths.push_back(TOKENFEED_ARROW_PLUGIN_BUILD_PATH);
#endif
  return paths;
}

std::string Joined(const std::vector<std::string>& paths) {
  std::string out;
  for (const std::string& p : paths) out += (out.empty() ? "" : ", ") + p;
  return out;
}

const Plugin& LoadPlugin() {
  static Plugin plugin;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates = Candidates();
    for (const std::string& c : candidates) {
      if (::access(c.c_str(), F_OK) == 0) {
        plugin.path = c;
        break;
      }
    }
    if (plugin.path.empty()) {
      plugin.error = "the Arrow plugin " TOKENFEED_ARROW_PLUGIN_FILE " is not in this installation (looked for " +
                     Joined(candidates) + "); reinstall tokenfeed, or set TOKENFEED_ARROW_PLUGIN to its path";
      return;
    }
    plugin.handle = ::dlopen(plugin.path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    loaded.store(plugin.handle != nullptr);
    if (plugin.handle != nullptr) return;
    const char* e = ::dlerror();
    std::string detail = e != nullptr ? e : "unknown error";
    // pyarrow absent, or another release whose libarrow has another SONAME:
    // the dynamic loader names the library it could not find.
    if (detail.find("libarrow") != std::string::npos || detail.find("libparquet") != std::string::npos) {
      plugin.error = "Parquet and s3:// inputs need pyarrow " TOKENFEED_PYARROW_SERIES " (" TOKENFEED_ARROW_SONAME
                     "): pip install 'tokenfeed[parquet]' (the Arrow plugin " +
                     plugin.path + " could not be loaded: " + detail + ")";
    } else {
      plugin.error = "the Arrow plugin " + plugin.path + " could not be loaded (" + detail +
                     "); reinstall tokenfeed, or set TOKENFEED_ARROW_PLUGIN to another libtokenfeed_arrow.so";
    }
  });
  return plugin;
}
#endif

}  // namespace

bool ArrowPluginBuilt() {
#ifdef TOKENFEED_ARROW_PLUGIN_FILE
  return true;
#else
  return false;
#endif
}

bool ArrowPluginLoaded() { return loaded.load(); }

bool ArrowPluginUsable(std::string* why) {
#ifdef TOKENFEED_ARROW_PLUGIN_FILE
  const Plugin& plugin = LoadPlugin();
  if (plugin.handle == nullptr) *why = plugin.error;
  return plugin.handle != nullptr;
#else
  *why = "the Arrow plugin was not built (build tokenfeed with -DTOKENFEED_WITH_PARQUET=ON; docs/ingest.md)";
  return false;
#endif
}

void* FindArrowPluginSymbol(const char* symbol, std::string* why) {
#ifdef TOKENFEED_ARROW_PLUGIN_FILE
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
