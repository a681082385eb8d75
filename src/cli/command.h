// The subcommands of the tokenfeed program. Each Add*Command registers its
// options on the CLI11 app and returns the function that runs it once the
// arguments are parsed. Commands report failure as a CommandResult (a Status,
// and whether it was the command line or the input data that was refused);
// main.cc is the one place that turns it into a message and an exit code
// (ExitCode below).
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "tokenfeed/status.h"

namespace tokenfeed::cli {

// The program's exit codes (README, "Exit codes"). What decides between 1
// and 2 is who refused, not the status code: the parser and the command's
// own checks of its arguments (CommandResult::Usage) make 2, anything met
// while the command works (files, topics, the tokenizer file, Kafka) makes 1,
// an InvalidArgument from there included.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,       // the command failed while working: I/O, Kafka, a missing, damaged or foreign topic,
                          // a tokenizer file that does not parse, a stop by signal
  kExitUsage = 2,         // the command line is wrong: refused by the parser or by the command's argument checks
  kExitDataRejected = 3,  // the run ended, but input was refused: --strict stopped it, or a file was unreadable
};

struct CommandResult {
  CommandResult(Status s = Status::OK()) : status(std::move(s)) {}  // NOLINT: a Status is a result
  // The command's own check of its arguments refused them (a malformed or
  // out-of-range value, a partition or offset the topic does not have).
  static CommandResult Usage(Status s) {
    CommandResult r(std::move(s));
    r.usage = true;
    return r;
  }
  static CommandResult DataRejected(Status s) {
    CommandResult r(std::move(s));
    r.data_rejected = true;
    return r;
  }
  Status status;
  bool usage = false;          // with a failed status: exit with kExitUsage
  bool data_rejected = false;  // with a failed status: exit with kExitDataRejected
};

using CommandRunner = std::function<CommandResult()>;

CommandRunner AddTokenizeCommand(CLI::App& app);
CommandRunner AddIngestCommand(CLI::App& app);
CommandRunner AddInspectCommand(CLI::App& app);
CommandRunner AddTopicsCommand(CLI::App& app);
CommandRunner AddIndexCommand(CLI::App& app);
CommandRunner AddReplayCommand(CLI::App& app);
CommandRunner AddSeenCommand(CLI::App& app);
#if TOKENFEED_HAS_KAFKA
CommandRunner AddServeCommand(CLI::App& app);
#endif

}  // namespace tokenfeed::cli
