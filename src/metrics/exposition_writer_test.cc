#include "metrics/exposition_writer.h"

#include <gtest/gtest.h>

namespace tokenfeed::metrics {
namespace {

TEST(ExpositionWriter, WritesFamiliesAndSamples) {
  ExpositionWriter w;
  w.Family("tokenfeed_x_total", "counter", "Things done.");
  w.Sample("tokenfeed_x_total", 3);
  w.Sample("tokenfeed_x_total", {{"source", "log:/a"}, {"epoch", "0"}}, 12);
  w.Sample("tokenfeed_x_total", {{"le", "+Inf"}}, 0.25);
  w.Sample("tokenfeed_x_total", 1e20);
  EXPECT_EQ(w.text(),
            "# HELP tokenfeed_x_total Things done.\n# TYPE tokenfeed_x_total counter\n"
            "tokenfeed_x_total 3\n"
            "tokenfeed_x_total{source=\"log:/a\",epoch=\"0\"} 12\n"
            "tokenfeed_x_total{le=\"+Inf\"} 0.25\n"
            "tokenfeed_x_total 1e+20\n");
}

TEST(ExpositionWriter, EscapesLabelValues) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  ExpositionWriter w;
  w.Sample("m", {{"uri", "kafka://h:1/t\"x"}}, 1);
  EXPECT_EQ(w.Take(), "m{uri=\"kafka://h:1/t\\\"x\"} 1\n");
}

}  // namespace
}  // namespace tokenfeed::metrics
