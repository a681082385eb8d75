// The loader's metrics (LoaderMetrics) as Prometheus text, what its endpoint
// (LoaderOptions::metrics_port) serves: families named tokenfeed_loader_*,
// units in the names, counters ending in _total, every sample labelled with
// the rank; the table is in docs/metrics.md. A pure function, thread-safe.
// Not the endpoint (metrics/metrics_http_server.h) nor the counting
// (batch_loader.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokenfeed/loader.h"

namespace tokenfeed::loader {

// `source_uris` in the order of LoaderOptions::sources (the source labels).
std::string LoaderExposition(const LoaderMetrics& m, uint32_t rank, const std::vector<std::string>& source_uris);

}  // namespace tokenfeed::loader
