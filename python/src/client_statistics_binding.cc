// The Kafka clients' statistics reports for Python (client_statistics.h):
// tokenfeed.kafka_statistics() parses them. Reading the store takes its lock
// only, never the GIL from a client thread.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <utility>
#include <vector>

#include "tokenfeed/client_statistics.h"

namespace nb = nanobind;

namespace tokenfeed::python {

void RegisterClientStatistics(nb::module_& m) {
  m.def(
      "_kafka_statistics",
      [](bool clear) {
        std::vector<std::pair<std::string, std::string>> out;
        for (auto& s : ClientStatisticsSnapshot()) out.emplace_back(std::move(s.client), std::move(s.json));
        const uint64_t dropped = DroppedClientStatistics();
        if (clear) ClearClientStatistics();
        return std::make_pair(std::move(out), dropped);
      },
      nb::arg("clear") = false,
      "([(client, json)], dropped): the latest statistics report of each Kafka client. Private: use "
      "tokenfeed.kafka_statistics().");
}

}  // namespace tokenfeed::python
