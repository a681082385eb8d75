// The subcommands of the tokenfeed program. Each Add*Command registers its
// options on the CLI11 app and returns the function that runs it once the
// arguments are parsed. Commands report failure as a Status; main.cc is the
// one place that turns a Status into a message and an exit code.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "tokenfeed/status.h"

namespace tokenfeed::cli {

using CommandRunner = std::function<Status()>;

CommandRunner AddTokenizeCommand(CLI::App& app);
CommandRunner AddIngestCommand(CLI::App& app);
CommandRunner AddInspectCommand(CLI::App& app);
CommandRunner AddTopicsCommand(CLI::App& app);
#if TOKENFEED_HAS_KAFKA
CommandRunner AddServeCommand(CLI::App& app);
#endif

}  // namespace tokenfeed::cli
