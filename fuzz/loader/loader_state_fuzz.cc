// Fuzzes the loader's state parser (loader/loader_state.h), what
// Loader::LoadState and TokenDataset.load_state_dict read before checking a
// state against the loader, and the snapshot parser (a snapshot handed from
// rank 0) on arbitrary text. Each returns a value or an error with a message,
// never crashes or reads outside the input; an accepted state or snapshot is
// written again and parses to an equal value, whose text is then a fixed
// point; a state's snapshot, written alone, is one the snapshot parser
// accepts. Aborts on a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "loader/loader_state.h"

namespace {

namespace ld = tokenfeed::loader;

[[noreturn]] void Finding(const std::string& what, std::string_view input) {
  std::fprintf(stderr, "loader_state_fuzz: %s for %zu bytes: %.*s\n", what.c_str(), input.size(),
               static_cast<int>(input.size() > 512 ? 512 : input.size()), input.data());
  std::abort();
}

template <typename R>
bool Answered(const R& r, std::string_view input) {
  if (r.ok()) return true;
  if (r.status().message().empty()) Finding("an error without a message", input);
  const tokenfeed::StatusCode code = r.status().code();
  if (code != tokenfeed::StatusCode::kInvalidArgument && code != tokenfeed::StatusCode::kUnsupported) {
    Finding("an error other than InvalidArgument or Unsupported: " + r.status().ToString(), input);
  }
  return false;
}

void CheckSnapshot(const ld::Snapshot& snapshot, std::string_view input) {
  const std::string text = ld::SnapshotJson(snapshot);
  auto again = ld::ParseSnapshot(text);
  if (!again.ok()) Finding("a written snapshot does not parse: " + again.status().ToString(), input);
  if (!(*again == snapshot)) Finding("a snapshot parses again to another value", input);
  if (ld::SnapshotJson(*again) != text) Finding("a snapshot's text is not a fixed point", input);
  for (const ld::SnapshotSource& source : snapshot.sources) {
    for (const ld::PartitionRange& range : source.partitions) {
      if (range.end < range.start) Finding("a partition range ends before it starts", input);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  auto state = ld::ParseLoaderState(input);
  if (Answered(state, input)) {
    const std::string text = ld::LoaderStateJson(*state);
    auto again = ld::ParseLoaderState(text);
    if (!again.ok()) Finding("a written state does not parse: " + again.status().ToString(), input);
    if (!(*again == *state)) Finding("a state parses again to another value", input);
    if (ld::LoaderStateJson(*again) != text) Finding("a state's text is not a fixed point", input);
    CheckSnapshot(state->snapshot, input);
  }

  auto snapshot = ld::ParseSnapshot(input);
  if (Answered(snapshot, input)) CheckSnapshot(*snapshot, input);
  return 0;
}
