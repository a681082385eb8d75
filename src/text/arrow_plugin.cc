// libtokenfeed_arrow.so's entry points (table_text_column.h, object_store.h):
// the only symbols it exports; everything else is hidden.
#include <arrow/io/interfaces.h>

#include <exception>

#include "text/arrow_s3_filesystem.h"
#include "text/arrow_table_readers.h"
#include "text/object_store.h"

namespace tokenfeed::text::arrow_plugin {
namespace {

// An object's ranged reads through Arrow's file, and the version it had
// when opened (CheckUnchanged looks the object up again).
class ArrowObjectReader final : public ObjectReader {
 public:
  ArrowObjectReader(std::string uri, std::shared_ptr<arrow::io::RandomAccessFile> file,
                    S3ObjectVersion version)
      : ObjectReader(std::move(uri)), file_(std::move(file)), version_(version) {}

  Result<size_t> ReadAt(uint64_t offset, char* dst, size_t n) override {
    const uint64_t size = version_.size;
    size_t got = 0;
    while (got < n && offset + got < size) {
      const auto want = static_cast<int64_t>(std::min<uint64_t>(n - got, size - (offset + got)));
      auto r = file_->ReadAt(static_cast<int64_t>(offset + got), want, dst + got);
      if (!r.ok()) {
        return Status::IoError("'" + uri_ + "': reading " + std::to_string(want) + " bytes at byte offset " +
                               std::to_string(offset + got) + " failed: " + r.status().ToString() +
                               "; check the endpoint and the credentials, then run the ingest again (it resumes)");
      }
      if (*r <= 0) break;
      got += static_cast<size_t>(*r);
    }
    return got;
  }
  uint64_t size() const override { return version_.size; }
  Status CheckUnchanged() override { return CheckS3ObjectUnchanged(uri_, version_); }

 private:
  std::shared_ptr<arrow::io::RandomAccessFile> file_;
  S3ObjectVersion version_;
};

}  // namespace
}  // namespace tokenfeed::text::arrow_plugin

extern "C" __attribute__((visibility("default"))) tokenfeed::Status tokenfeed_table_open(
    const std::string& path, tokenfeed::text::TableFormat format, std::string_view field, uint64_t first_row,
    size_t batch_rows, std::unique_ptr<tokenfeed::text::TableTextColumn>* out) {
  using namespace tokenfeed::text;
  try {
    auto opened = format == TableFormat::kParquet
                      ? arrow_plugin::OpenParquetTextColumn(path, field, first_row, batch_rows)
                      : arrow_plugin::OpenArrowIpcTextColumn(path, field, first_row, batch_rows);
    if (!opened.ok()) return opened.status();
    *out = std::move(*opened);
    return tokenfeed::Status::OK();
  } catch (const std::exception& e) {
    return tokenfeed::Status::Corruption("'" + path + "': " + e.what());
  }
}

extern "C" __attribute__((visibility("default"))) tokenfeed::Status tokenfeed_object_list(
    const std::string& uri, std::vector<tokenfeed::text::ObjectInfo>* out) {
  try {
    return tokenfeed::text::arrow_plugin::ListS3Objects(uri, out);
  } catch (const std::exception& e) {
    return tokenfeed::Status::IoError("'" + uri + "': listing failed: " + e.what());
  }
}

extern "C" __attribute__((visibility("default"))) tokenfeed::Status tokenfeed_object_open(
    const std::string& uri, std::unique_ptr<tokenfeed::text::ObjectReader>* out) {
  using namespace tokenfeed::text;
  try {
    std::shared_ptr<arrow::io::RandomAccessFile> file;
    uint64_t size = 0;
    arrow_plugin::S3ObjectVersion version;
    TF_RETURN_IF_ERROR(arrow_plugin::OpenS3File(uri, &file, &size, &version));
    *out = std::make_unique<arrow_plugin::ArrowObjectReader>(uri, std::move(file), version);
    return tokenfeed::Status::OK();
  } catch (const std::exception& e) {
    return tokenfeed::Status::IoError("'" + uri + "': opening failed: " + e.what());
  }
}

extern "C" __attribute__((visibility("default"))) void tokenfeed_object_store_finalize() {
  tokenfeed::text::arrow_plugin::FinalizeS3Client();
}
