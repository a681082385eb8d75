// tokenfeed: the command-line program. See README.md for each subcommand.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "cli/command.h"

int main(int argc, char** argv) {
  CLI::App app{"tokenfeed: corpus -> tokens -> topic -> training batches"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tokenfeed ") + TOKENFEED_VERSION);

  std::vector<std::pair<CLI::App*, tokenfeed::cli::CommandRunner>> commands;
  auto add = [&](tokenfeed::cli::CommandRunner runner) {
    commands.emplace_back(app.get_subcommands({}).back(), std::move(runner));
  };
  add(tokenfeed::cli::AddTokenizeCommand(app));
  add(tokenfeed::cli::AddIngestCommand(app));
  add(tokenfeed::cli::AddInspectCommand(app));
  add(tokenfeed::cli::AddTopicsCommand(app));
#if TOKENFEED_HAS_KAFKA
  add(tokenfeed::cli::AddServeCommand(app));
#endif

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  for (auto& [sub, run] : commands) {
    if (!sub->parsed()) continue;
    tokenfeed::Status status = run();
    if (status.ok()) return 0;
    std::fflush(stdout);
    std::fprintf(stderr, "tokenfeed %s: %s\n", sub->get_name().c_str(), status.ToString().c_str());
    return 1;
  }
  return 2;
}
