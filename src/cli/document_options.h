// The document stage's command-line options, the same for ingest and serve:
// --add-bos, --add-eos, --keep-special-tokens (document/document_encoder.h).
#pragma once

#include <CLI/CLI.hpp>

#include "document/document_encoder.h"

namespace tokenfeed::cli {

void AddDocumentOptions(CLI::App* cmd, document::DocumentOptions* options);

}  // namespace tokenfeed::cli
