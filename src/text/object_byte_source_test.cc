// ByteSource over an object (ByteSource::FromObject) with an in-memory
// ObjectReader that records its ranged requests: the bytes, the request
// sizes (1 MiB doubling to 8 MiB), seeks, and an object that shrinks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "text/byte_source.h"
#include "text/object_store.h"
#include "text/text_test_files.h"

namespace tokenfeed::text {
namespace {

using testing::ReadAll;

constexpr size_t kMiB = 1024 * 1024;

struct Request {
  uint64_t offset;
  size_t bytes;
};

class MemoryObject final : public ObjectReader {
 public:
  MemoryObject(std::string uri, const std::string* data, std::vector<Request>* requests)
      : ObjectReader(std::move(uri)), data_(data), opened_(*data), size_(data->size()), requests_(requests) {}

  // The object as stored changes when `*data_` does (its size or bytes).
  Status CheckUnchanged() override {
    ++checks;
    if (*data_ == opened_) return Status::OK();
    return Status::IoError("'" + uri_ + "': the object changed while being read");
  }
  int checks = 0;

  Result<size_t> ReadAt(uint64_t offset, char* dst, size_t n) override {
    requests_->push_back({offset, n});
    if (offset >= data_->size()) return size_t{0};
    const size_t take = std::min<size_t>(n, data_->size() - offset);
    std::memcpy(dst, data_->data() + offset, take);
    return take;
  }
  uint64_t size() const override { return size_; }

 private:
  const std::string* data_;
  const std::string opened_;  // the version opened
  uint64_t size_;  // as listed: the data may shrink after
  std::vector<Request>* requests_;
};

std::string Lines(size_t bytes) {
  std::string s;
  for (size_t i = 0; s.size() < bytes; ++i) s += "{\"text\":\"line " + std::to_string(i) + "\"}\n";
  return s;
}


TEST(ObjectByteSourceTest, PlainObjectIsReadInGrowingRangedRequests) {
  const std::string data = Lines(20 * kMiB);
  std::vector<Request> requests;
  auto source = ByteSource::FromObject(std::make_unique<MemoryObject>("s3://b/a.jsonl", &data, &requests));
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ((*source)->path(), "s3://b/a.jsonl");
  EXPECT_EQ((*source)->compression(), Compression::kNone);
  std::string got;
  ASSERT_TRUE(ReadAll(source->get(), 64 * 1024, &got).ok());
  EXPECT_EQ(got, data);
  // 1, 2, 4, 8 MiB, then 8 MiB chunks; never more than one chunk at a time.
  ASSERT_GE(requests.size(), 5u);
  EXPECT_EQ(requests[0].offset, 0u);
  EXPECT_EQ(requests[0].bytes, 1 * kMiB);
  EXPECT_EQ(requests[1].bytes, 2 * kMiB);
  EXPECT_EQ(requests[2].bytes, 4 * kMiB);
  EXPECT_EQ(requests[3].bytes, 8 * kMiB);
  uint64_t expected_offset = 0;
  for (const Request& r : requests) {
    EXPECT_LE(r.bytes, 8 * kMiB);
    EXPECT_EQ(r.offset, expected_offset);  // front to back, each byte fetched once
    expected_offset += r.bytes;
  }
}

TEST(ObjectByteSourceTest, SmallObjectIsOneRequestOfItsSize) {
  const std::string data = Lines(1000);
  std::vector<Request> requests;
  auto source = ByteSource::FromObject(std::make_unique<MemoryObject>("s3://b/s.jsonl", &data, &requests));
  ASSERT_TRUE(source.ok());
  std::string got;
  ASSERT_TRUE(ReadAll(source->get(), 7, &got).ok());
  EXPECT_EQ(got, data);
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].bytes, data.size());
}

TEST(ObjectByteSourceTest, SeekIsOneRangedRequestAtTheOffset) {
  const std::string data = Lines(3 * kMiB);
  std::vector<Request> requests;
  auto source = ByteSource::FromObject(std::make_unique<MemoryObject>("s3://b/a.jsonl", &data, &requests));
  ASSERT_TRUE(source.ok());
  ASSERT_TRUE((*source)->can_seek());
  const uint64_t at = 2 * kMiB + 12345;
  ASSERT_TRUE((*source)->SeekTo(at).ok());
  requests.clear();
  std::string got;
  ASSERT_TRUE(ReadAll(source->get(), 4096, &got).ok());
  EXPECT_EQ(got, data.substr(at));
  ASSERT_FALSE(requests.empty());
  EXPECT_EQ(requests[0].offset, at);
}

TEST(ObjectByteSourceTest, CompressedObjectsAreDecompressedAcrossChunks) {
  const std::string data = Lines(6 * kMiB);
  for (const std::string& stored : {testing::GzipCompress(data, 2), testing::ZstdCompress(data, 3)}) {
    std::vector<Request> requests;
    auto source = ByteSource::FromObject(std::make_unique<MemoryObject>("s3://b/a.jsonl.gz", &stored, &requests));
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    EXPECT_NE((*source)->compression(), Compression::kNone);
    std::string got;
    ASSERT_TRUE(ReadAll(source->get(), 1 << 16, &got).ok());
    EXPECT_EQ(got, data);
  }
}

TEST(ObjectByteSourceTest, ObjectShorterThanListedIsAnErrorNamingIt) {
  std::string data = Lines(2 * kMiB);
  std::vector<Request> requests;
  auto source = ByteSource::FromObject(std::make_unique<MemoryObject>("s3://b/a.jsonl", &data, &requests));
  ASSERT_TRUE(source.ok());
  data.resize(kMiB);  // replaced by a shorter object while being read
  std::string got;
  Status s = ReadAll(source->get(), 1 << 16, &got);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find("'s3://b/a.jsonl': the object changed while being read"), std::string::npos)
      << s.ToString();
}

TEST(ObjectByteSourceTest, AnObjectRewrittenWithTheSameSizeWhileReadIsAnErrorAtItsEnd) {
  std::string data = Lines(3 * kMiB);
  std::vector<Request> requests;
  auto object = std::make_unique<MemoryObject>("s3://b/a.jsonl", &data, &requests);
  MemoryObject* seen = object.get();
  auto source = ByteSource::FromObject(std::move(object));
  ASSERT_TRUE(source.ok());
  std::string buf(1 << 16, '\0');
  ASSERT_TRUE((*source)->Read(buf.data(), buf.size()).ok());  // the first chunk, of the version opened
  data.replace(2 * kMiB, 5, "XXXXX");  // rewritten in place: same size
  std::string got;
  Status s = ReadAll(source->get(), 1 << 16, &got);
  ASSERT_FALSE(s.ok()) << "the change went unseen";
  EXPECT_NE(s.message().find("changed while being read"), std::string::npos) << s.ToString();
  EXPECT_EQ(seen->checks, 1);
}

TEST(ObjectByteSourceTest, AnUnchangedObjectIsCheckedOnceAtItsEnd) {
  const std::string data = Lines(3 * kMiB);
  std::vector<Request> requests;
  auto object = std::make_unique<MemoryObject>("s3://b/a.jsonl", &data, &requests);
  MemoryObject* seen = object.get();
  auto source = ByteSource::FromObject(std::move(object));
  ASSERT_TRUE(source.ok());
  std::string got;
  ASSERT_TRUE(ReadAll(source->get(), 1 << 16, &got).ok());
  EXPECT_EQ(got, data);
  EXPECT_EQ(seen->checks, 1);
}

TEST(ObjectByteSourceTest, CompressedNameWithoutMagicIsAnError) {
  const std::string data = "{\"text\":\"plain\"}\n";
  std::vector<Request> requests;
  auto source = ByteSource::FromObject(std::make_unique<MemoryObject>("s3://b/a.jsonl.zst", &data, &requests));
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), StatusCode::kCorruption);
  EXPECT_NE(source.status().message().find("'s3://b/a.jsonl.zst' is named like a zstd file"), std::string::npos);
}

}  // namespace
}  // namespace tokenfeed::text
