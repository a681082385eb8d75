// ListObjects / OpenObject: the Arrow plugin's entry points, or the refusal
// of a build without it.
#include "text/object_store.h"

#include "text/arrow_plugin_loader.h"

namespace tokenfeed::text {
namespace {

Status NoObjectStore(const std::string& uri, const std::string& why) {
  if (!ArrowPluginBuilt()) {
    return Status::Unsupported("'" + uri +
                               "': S3 input (s3://) was not built in: it reads through the Arrow plugin (build "
                               "tokenfeed with -DTOKENFEED_WITH_PARQUET=ON; docs/ingest.md, \"Object storage (S3)\"), "
                               "or copy the objects to a local directory first");
  }
  return Status::Unsupported("'" + uri + "': S3 input needs the Arrow plugin, but " + why);
}

// The plugin's entry point `symbol`, or the refusal naming `uri`.
Result<void*> EntryPoint(const std::string& uri, const char* symbol) {
  std::string why;
  void* entry = ArrowPluginBuilt() ? FindArrowPluginSymbol(symbol, &why) : nullptr;
  if (entry == nullptr) return NoObjectStore(uri, why);
  return entry;
}

}  // namespace

bool ObjectStoreAvailable() { return ArrowPluginBuilt(); }

Result<std::vector<ObjectInfo>> ListObjects(const std::string& uri) {
  TF_ASSIGN_OR_RETURN(void* entry, EntryPoint(uri, kObjectListSymbol));
  std::vector<ObjectInfo> objects;
  TF_RETURN_IF_ERROR(reinterpret_cast<ObjectListFunction>(entry)(uri, &objects));
  return objects;
}

Result<std::unique_ptr<ObjectReader>> OpenObject(const std::string& uri) {
  TF_ASSIGN_OR_RETURN(void* entry, EntryPoint(uri, kObjectOpenSymbol));
  std::unique_ptr<ObjectReader> reader;
  TF_RETURN_IF_ERROR(reinterpret_cast<ObjectOpenFunction>(entry)(uri, &reader));
  return reader;
}

void FinalizeObjectStore() {
  if (!ArrowPluginLoaded()) return;
  std::string why;
  if (void* entry = FindArrowPluginSymbol(kObjectStoreFinalizeSymbol, &why)) {
    reinterpret_cast<ObjectStoreFinalizeFunction>(entry)();
  }
}

}  // namespace tokenfeed::text
