// A build without Parquet support says so, wherever Parquet is asked for.
#include <gtest/gtest.h>

#include "text/binary_input.h"
#include "text/document_reader.h"
#include "text/table_text_column.h"
#include "text/text_test_files.h"

namespace tokenfeed::text {
namespace {

TEST(TableUnavailableTest, EveryWayInSaysItWasNotBuiltIn) {
  EXPECT_FALSE(TableTextColumn::Available());
  auto column = TableTextColumn::Open("in/a.parquet", TableFormat::kParquet, "text", 0);
  ASSERT_FALSE(column.ok());
  EXPECT_EQ(column.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(column.status().message().find("'in/a.parquet': Parquet support (Parquet and Arrow IPC files) was not built in"), std::string::npos);

  ReaderOptions o;
  o.format = InputFormat::kParquet;
  auto reader = DocumentReader::Open(SourceSet::FromPaths({"in/a.parquet"}), o);
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.status().message().find("Parquet support was not built in"), std::string::npos);

  testing::TempDir dir;
  std::string path = dir.Write("a.parquet", "PAR1\x15\x04 values \x1c" "PAR1");
  Status s = CheckTextInputs(SourceSet::FromPaths({path}), InputFormat::kAuto);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("a Parquet file (PAR1 at the start and at the end of the file); Parquet support was "
                             "not built in"),
            std::string::npos)
      << s.ToString();
}

}  // namespace
}  // namespace tokenfeed::text
