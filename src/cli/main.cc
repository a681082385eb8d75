// tokenfeed: the command-line program. See README.md for each subcommand and
// for the exit codes (cli/command.h, ExitCode), which are decided here only.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "tokenfeed/ingest.h"
#include "tokenfeed/client_log.h"

namespace {

using tokenfeed::cli::ExitCode;

// CLI11's own codes (105-109 and so on) become the one usage code; asking for
// help or the version is a success.
int ExitForParseError(CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
  app.exit(e);
  return ExitCode::kExitUsage;
}

int ExitForResult(const std::string& command, const tokenfeed::cli::CommandResult& result) {
  if (result.status.ok()) return ExitCode::kExitOk;
  std::fflush(stdout);
  std::fprintf(stderr, "tokenfeed %s: %s\n", command.c_str(), result.status.ToString().c_str());
  if (result.data_rejected) return ExitCode::kExitDataRejected;
  // By who refused, not by the status code: an InvalidArgument met while
  // working (a tokenizer file that does not parse, a topic of raw text) is a
  // failure of the command, not a wrong command line.
  if (result.usage) return ExitCode::kExitUsage;
  return ExitCode::kExitFailure;
}

// The Kafka client library's lines, in the CLI's own form:
// "tokenfeed kafka: error: [FAIL rdkafka#producer-1] Connect to ... failed".
void PrintClientLogLine(const tokenfeed::ClientLogLine& line) {
  std::fprintf(stderr, "tokenfeed kafka: %s: [%s %s] %s\n", tokenfeed::ClientLogSeverityName(line.severity),
               line.facility.c_str(), line.client.c_str(), line.message.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tokenfeed: corpus -> tokens -> topic -> training batches"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tokenfeed ") + TOKENFEED_VERSION);
  app.footer("Exit codes: 0 success, 1 the command failed while working, 2 the command line is wrong (also a "
             "value out of range for the topic, such as inspect --partition 9 of a 4-partition topic), "
             "3 input was refused (--strict, an unreadable input file).");

  std::vector<std::pair<CLI::App*, tokenfeed::cli::CommandRunner>> commands;
  auto add = [&](tokenfeed::cli::CommandRunner runner) {
    commands.emplace_back(app.get_subcommands({}).back(), std::move(runner));
  };
  add(tokenfeed::cli::AddTokenizeCommand(app));
  add(tokenfeed::cli::AddIngestCommand(app));
  add(tokenfeed::cli::AddInspectCommand(app));
  add(tokenfeed::cli::AddTopicsCommand(app));
  add(tokenfeed::cli::AddIndexCommand(app));
  add(tokenfeed::cli::AddReplayCommand(app));
  add(tokenfeed::cli::AddSeenCommand(app));
#if TOKENFEED_HAS_KAFKA
  add(tokenfeed::cli::AddServeCommand(app));
#endif

  tokenfeed::SetClientLogSink(PrintClientLogLine);

  if (argc <= 1) {  // a bare `tokenfeed`: what it can do
    std::fputs(app.help().c_str(), stdout);
    return ExitCode::kExitOk;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return ExitForParseError(app, e);
  }
  for (auto& [sub, run] : commands) {
    if (sub->parsed()) {
      const int code = ExitForResult(sub->get_name(), run());
      // Before exit, not in static destructors: Arrow's S3 client, when an
      // input was in S3.
      tokenfeed::ingest::ShutdownIngestInputs();
      return code;
    }
  }
  return ExitCode::kExitUsage;
}
