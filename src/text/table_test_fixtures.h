// The Parquet test fixtures: what table_fixture_writer writes (through
// Arrow's own writer, in a program of its own so that the tests themselves
// never link Arrow: see table_text_column.h) and the texts the tests expect.
// Test-only code.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace tokenfeed::text::testing {

// The text column of a "sample" file of n rows: every fifth row (3, 8, ...)
// is null.
inline std::vector<std::optional<std::string>> SampleParquetTexts(size_t n) {
  std::vector<std::optional<std::string>> texts;
  for (size_t i = 0; i < n; ++i) {
    if (i % 5 == 3) {
      texts.push_back(std::nullopt);
    } else {
      texts.push_back("document " + std::to_string(i) + " — données 数据 " + std::string(i % 7, 'x'));
    }
  }
  return texts;
}

// Runs the fixture writer: `kind path [args]`, as listed in
// table_fixture_writer.cc. Fails the test when it fails.
void WriteTableFixture(const std::string& arguments);

}  // namespace tokenfeed::text::testing
