// The subcommands of the tokenfeed program. Each Add*Command registers its
// options on the CLI11 app and returns the function that runs it once the
// arguments are parsed. Commands report failure as a CommandResult (a Status,
// and whether it was the input data that was refused); main.cc is the one
// place that turns it into a message and an exit code (ExitCode below).
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "tokenfeed/status.h"

namespace tokenfeed::cli {

// The program's exit codes (README, "Exit codes").
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,       // the command failed: I/O, Kafka, a damaged topic, a stop by signal
  kExitUsage = 2,         // the command line is wrong: refused by the parser or by the command (InvalidArgument)
  kExitDataRejected = 3,  // the run ended, but input was refused: --strict stopped it, or a file was unreadable
};

struct CommandResult {
  CommandResult(Status s = Status::OK()) : status(std::move(s)) {}  // NOLINT: a Status is a result
  static CommandResult DataRejected(Status s) {
    CommandResult r(std::move(s));
    r.data_rejected = true;
    return r;
  }
  Status status;
  bool data_rejected = false;  // with a failed status: exit with kExitDataRejected
};

using CommandRunner = std::function<CommandResult()>;

CommandRunner AddTokenizeCommand(CLI::App& app);
CommandRunner AddIngestCommand(CLI::App& app);
CommandRunner AddInspectCommand(CLI::App& app);
CommandRunner AddTopicsCommand(CLI::App& app);
#if TOKENFEED_HAS_KAFKA
CommandRunner AddServeCommand(CLI::App& app);
#endif

}  // namespace tokenfeed::cli
