// The attributes the ingest stores in every token record.
#pragma once

#include <string_view>

namespace tokenfeed::ingest {

// The settings fingerprint of the ingest that wrote the record (16 hex
// digits): a resumed run checks it before adding to a topic.
inline constexpr std::string_view kRunAttribute = "run";

}  // namespace tokenfeed::ingest
