// deploy/grafana/tokenfeed.json: it parses, its panels query something, and
// every tokenfeed_* metric in its queries appears in the exposition the
// loader (loader_exposition.h) or serve (serve_metrics.h) writes.
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <simdjson.h>

#include "loader/loader_exposition.h"
#ifdef TOKENFEED_HAVE_SERVE
#include "serve/serve_metrics.h"
#endif

namespace tokenfeed {
namespace {

void CollectExprs(simdjson::dom::element e, std::vector<std::string>* out) {
  simdjson::dom::object obj;
  simdjson::dom::array arr;
  if (!e.get(obj)) {
    for (auto field : obj) {
      std::string_view text;
      if (field.key == "expr" && !field.value.get(text)) out->emplace_back(text);
      CollectExprs(field.value, out);
    }
  } else if (!e.get(arr)) {
    for (simdjson::dom::element item : arr) CollectExprs(item, out);
  }
}

// The sample names of an exposition (histogram series included).
std::set<std::string> SampleNames(const std::string& text) {
  std::set<std::string> names;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    names.insert(line.substr(0, line.find_first_of("{ ")));
  }
  return names;
}

TEST(GrafanaDashboard, ParsesAndQueriesOnlyMetricsThatExist) {
  std::ifstream in(std::string(TOKENFEED_SOURCE_DIR) + "/deploy/grafana/tokenfeed.json");
  ASSERT_TRUE(in) << "deploy/grafana/tokenfeed.json is missing";
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string json = buf.str();
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(json).get(root), simdjson::SUCCESS) << "the dashboard is not valid JSON";
  simdjson::dom::array panels;
  ASSERT_EQ(root["panels"].get(panels), simdjson::SUCCESS);
  std::vector<std::string> exprs;
  CollectExprs(root, &exprs);
  ASSERT_GE(exprs.size(), 15u);

  // A loader with every kind of sample: a lag, a source's counts.
  LoaderMetrics m;
  m.partition_lag = {{"log:/d/a", 0, 1, 0.2}};
  m.epochs_completed = {0};
  m.consumed = {{0, 0, 10, 1}};
  std::set<std::string> exposed = SampleNames(loader::LoaderExposition(m, 0, {"log:/d/a"}));
  bool serve_queried = false;
#ifdef TOKENFEED_HAVE_SERVE
  serve::ServeMetrics serve_metrics("raw");
  serve_metrics.SetLag({{0, 5}});
  for (const std::string& name : SampleNames(serve_metrics.RenderPrometheus())) exposed.insert(name);
#endif
  const std::regex metric(R"(tokenfeed_[a-z0-9_]+)");
  std::set<std::string> queried;
  for (const std::string& e : exprs) {
    for (auto it = std::sregex_iterator(e.begin(), e.end(), metric); it != std::sregex_iterator(); ++it) {
      queried.insert(it->str());
    }
  }
  for (const std::string& name : queried) {
    if (name.starts_with("tokenfeed_serve_")) {
      serve_queried = true;
#ifndef TOKENFEED_HAVE_SERVE
      continue;  // serve is not built without the Kafka transport
#endif
    }
    EXPECT_TRUE(exposed.count(name)) << "the dashboard queries " << name << ", which nothing exposes";
  }
  EXPECT_TRUE(serve_queried);
  // Every loader family is on the dashboard.
  for (const std::string& name : exposed) {
    if (!name.starts_with("tokenfeed_loader_")) continue;
    const bool histogram_part = name.ends_with("_bucket") || name.ends_with("_sum") || name.ends_with("_count");
    if (histogram_part) continue;
    EXPECT_TRUE(queried.count(name)) << name << " is not on the dashboard";
  }
}

}  // namespace
}  // namespace tokenfeed
