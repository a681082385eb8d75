// table_fixture_writer KIND PATH [ARGS]: writes one Parquet test fixture
// with Arrow's writer (table_test_fixtures.h says why it is a program).
//   sample PATH ROWS snappy|zstd|none ROW_GROUP_ROWS   columns id (int64), text (string, nulls), url
//   nested PATH      struct meta{lang, body} with a null struct, "meta.url" (string), n (int64)
//   large PATH       content as large_string: "large one", "large two"
//   limits PATH      text: "short", 100 x 'y', "bad \xff byte"
//   ipc PATH ROWS zstd|none BATCH_ROWS   the sample's columns as an Arrow IPC file, nested meta{body} too
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/ipc/writer.h>
#include <arrow/util/compression.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "text/table_test_fixtures.h"

namespace {

using Texts = std::vector<std::optional<std::string>>;

std::shared_ptr<arrow::Array> Strings(const Texts& values) {
  arrow::StringBuilder b;
  for (const auto& v : values) {
    arrow::Status s = v ? b.Append(*v) : b.AppendNull();
    if (!s.ok()) std::abort();
  }
  return b.Finish().ValueOrDie();
}

std::shared_ptr<arrow::Array> Ints(size_t n) {
  arrow::Int64Builder b;
  for (size_t i = 0; i < n; ++i) {
    if (!b.Append(static_cast<int64_t>(i) * 7).ok()) std::abort();
  }
  return b.Finish().ValueOrDie();
}

int Write(const std::shared_ptr<arrow::Table>& table, const std::string& path, arrow::Compression::type compression,
          int64_t row_group_rows) {
  auto out = arrow::io::FileOutputStream::Open(path);
  if (!out.ok()) {
    std::fprintf(stderr, "%s\n", out.status().ToString().c_str());
    return 1;
  }
  auto props = parquet::WriterProperties::Builder().compression(compression)->build();
  arrow::Status s = parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), *out, row_group_rows, props);
  if (s.ok()) s = (*out)->Close();
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: table_fixture_writer KIND PATH [ARGS]\n");
    return 2;
  }
  const std::string kind = argv[1], path = argv[2];
  if (kind == "sample" && argc == 6) {
    const size_t n = std::strtoull(argv[3], nullptr, 10);
    const std::string codec = argv[4];
    const auto compression = codec == "snappy" ? arrow::Compression::SNAPPY
                             : codec == "zstd" ? arrow::Compression::ZSTD
                                               : arrow::Compression::UNCOMPRESSED;
    Texts urls;
    for (size_t i = 0; i < n; ++i) urls.push_back("https://example.org/" + std::to_string(i));
    auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("text", arrow::utf8()),
                                 arrow::field("url", arrow::utf8())});
    auto table = arrow::Table::Make(
        schema, {Ints(n), Strings(tokenfeed::text::testing::SampleParquetTexts(n)), Strings(urls)});
    return Write(table, path, compression, std::strtoll(argv[5], nullptr, 10));
  }
  if (kind == "ipc" && argc == 6) {
    const size_t n = std::strtoull(argv[3], nullptr, 10);
    const std::string codec = argv[4];
    auto texts = tokenfeed::text::testing::SampleParquetTexts(n);
    auto meta_type = arrow::struct_({arrow::field("body", arrow::utf8())});
    auto bodies = Strings(texts);
    auto meta = std::make_shared<arrow::StructArray>(meta_type, static_cast<int64_t>(n),
                                                     std::vector<std::shared_ptr<arrow::Array>>{bodies});
    auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("text", arrow::utf8()),
                                 arrow::field("meta", meta_type)});
    auto table = arrow::Table::Make(schema, {Ints(n), Strings(texts), meta});
    auto options = arrow::ipc::IpcWriteOptions::Defaults();
    if (codec == "zstd") options.codec = arrow::util::Codec::Create(arrow::Compression::ZSTD).ValueOrDie();
    auto out = arrow::io::FileOutputStream::Open(path).ValueOrDie();
    auto writer = arrow::ipc::MakeFileWriter(out, schema, options).ValueOrDie();
    arrow::Status s = writer->WriteTable(*table, std::strtoll(argv[5], nullptr, 10));
    if (s.ok()) s = writer->Close();
    if (s.ok()) s = out->Close();
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
    return 0;
  }
  if (kind == "nested") {
    auto meta_type = arrow::struct_({arrow::field("lang", arrow::utf8()), arrow::field("body", arrow::utf8())});
    // The second row's struct is null as a whole, its body not.
    std::shared_ptr<arrow::Buffer> validity = arrow::AllocateBitmap(3).ValueOrDie();
    validity->mutable_data()[0] = 0b101;
    auto meta = std::make_shared<arrow::StructArray>(
        meta_type, 3, std::vector<std::shared_ptr<arrow::Array>>{Strings({"en", "fr", "de"}), Strings({"a", "b", "c"})},
        validity, 1);
    auto schema = arrow::schema({arrow::field("meta", meta_type), arrow::field("meta.url", arrow::utf8()),
                                 arrow::field("n", arrow::int64())});
    return Write(arrow::Table::Make(schema, {meta, Strings({"dot 0", "dot 1", "dot 2"}), Ints(3)}), path,
                 arrow::Compression::SNAPPY, 2);
  }
  if (kind == "large") {
    arrow::LargeStringBuilder b;
    if (!b.Append("large one").ok() || !b.Append("large two").ok()) return 1;
    auto schema = arrow::schema({arrow::field("content", arrow::large_utf8())});
    return Write(arrow::Table::Make(schema, {b.Finish().ValueOrDie()}), path, arrow::Compression::ZSTD, 10);
  }
  if (kind == "limits") {
    auto schema = arrow::schema({arrow::field("text", arrow::utf8())});
    return Write(arrow::Table::Make(schema, {Strings({"short", std::string(100, 'y'), "bad \xff byte"})}), path,
                 arrow::Compression::SNAPPY, 2);
  }
  std::fprintf(stderr, "table_fixture_writer: unknown fixture '%s' or wrong arguments\n", kind.c_str());
  return 2;
}
