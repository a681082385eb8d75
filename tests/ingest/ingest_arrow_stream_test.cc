// RunIngestFromArrowStream as a C++ caller uses it: a stream column's name
// follows the stream's rules (dots anywhere), every refusal of the options or
// the column comes before the topic is opened, and the messages of a run that
// stopped or met another run's topic say that a stream cannot be resumed.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/scoped_temp_dir.h"
#include "text/arrow_c_stream.h"
#include "tokenfeed/ingest.h"
#include "tokenizer/test_tokenizers.h"

namespace tokenfeed::ingest {
namespace {

// One batch of one utf8 column named `column`; the stream owns everything.
struct OneBatch {
  std::string column;
  std::vector<int32_t> offsets{0};
  std::string data;
  const void* text_buffers[3] = {};
  const void* struct_buffers[1] = {};
  ArrowArray text{};
  ArrowArray* children[1] = {&text};
  ArrowSchema text_schema{};
  ArrowSchema* schema_children[1] = {&text_schema};
  bool given = false;
};

ArrowArrayStream MakeStream(const std::string& column, const std::vector<std::string>& texts) {
  auto* batch = new OneBatch;
  batch->column = column;
  for (const auto& t : texts) {
    batch->data += t;
    batch->offsets.push_back(static_cast<int32_t>(batch->data.size()));
  }
  ArrowArrayStream stream{};
  stream.private_data = batch;
  stream.get_schema = [](ArrowArrayStream* self, ArrowSchema* out) {
    auto* b = static_cast<OneBatch*>(self->private_data);
    b->text_schema = ArrowSchema{};
    b->text_schema.format = "u";
    b->text_schema.name = b->column.c_str();
    b->text_schema.release = [](ArrowSchema* schema) { schema->release = nullptr; };
    *out = ArrowSchema{};
    out->format = "+s";
    out->name = "";
    out->n_children = 1;
    out->children = b->schema_children;
    out->release = [](ArrowSchema* schema) { schema->release = nullptr; };
    return 0;
  };
  stream.get_next = [](ArrowArrayStream* self, ArrowArray* out) {
    auto* b = static_cast<OneBatch*>(self->private_data);
    *out = ArrowArray{};
    if (b->given) return 0;  // the end: release stays null
    b->given = true;
    const auto rows = static_cast<int64_t>(b->offsets.size() - 1);
    b->text_buffers[1] = b->offsets.data();
    b->text_buffers[2] = b->data.data();
    b->text = ArrowArray{};
    b->text.length = rows;
    b->text.n_buffers = 3;
    b->text.buffers = b->text_buffers;
    b->text.release = [](ArrowArray* a) { a->release = nullptr; };
    out->length = rows;
    out->n_buffers = 1;
    out->buffers = b->struct_buffers;
    out->n_children = 1;
    out->children = b->children;
    out->release = [](ArrowArray* a) { a->release = nullptr; };
    return 0;
  };
  stream.get_last_error = [](ArrowArrayStream*) -> const char* { return nullptr; };
  stream.release = [](ArrowArrayStream* self) {
    delete static_cast<OneBatch*>(self->private_data);
    self->release = nullptr;
  };
  return stream;
}

class IngestArrowStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tokenizer_ = tokenizer::TestTokenizerPath("deepseek_v3");
    if (!std::ifstream(tokenizer_)) {
      if (tokenizer::ReferenceRequired()) FAIL() << tokenizer_ << " is missing";
      GTEST_SKIP() << tokenizer_ << " is missing (run scripts/setup.sh)";
    }
  }

  IngestOptions Options(const std::string& topic, const std::string& field) {
    IngestOptions o;
    o.tokenizer_path = tokenizer_;
    o.to_uri = "log:" + dir_.Join(topic);
    o.reader.json_field = field;
    o.progress = ProgressMode::kNever;
    o.threads = 1;
    return o;
  }

  std::string tokenizer_;
  ScopedTempDir dir_;
};

TEST_F(IngestArrowStreamTest, AColumnNameWithDotsAnywhereIsSelectable) {
  ArrowArrayStream s = MakeStream(".a..b.", {"one", "two"});
  auto stats = RunIngestFromArrowStream(Options("t", ".a..b."), &s);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->documents_written, 2u);
}

TEST_F(IngestArrowStreamTest, RefusalsComeBeforeTheTopicIsOpened) {
  {
    ArrowArrayStream s = MakeStream("text", {"one"});
    auto stats = RunIngestFromArrowStream(Options("missing_column", "body"), &s);
    ASSERT_FALSE(stats.ok());
    EXPECT_NE(stats.status().message().find("has no column 'body'"), std::string::npos) << stats.status().ToString();
    EXPECT_FALSE(std::filesystem::exists(dir_.Join("missing_column")));
  }
  {
    ArrowArrayStream s = MakeStream("text", {"one"});
    IngestOptions o = Options("bad_size", "text");
    o.reader.max_document_bytes = 0;
    auto stats = RunIngestFromArrowStream(o, &s);
    ASSERT_FALSE(stats.ok());
    EXPECT_TRUE(stats.status().code() == StatusCode::kInvalidArgument) << stats.status().ToString();
    EXPECT_NE(stats.status().message().find("maximum document size"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(dir_.Join("bad_size"))) << "refused after the topic was created";
  }
  {
    // The format is a file's; a stream is read as a stream whatever it says.
    ArrowArrayStream s = MakeStream("text", {"one"});
    IngestOptions o = Options("format", "text");
    o.reader.format = text::InputFormat::kParquet;
    auto stats = RunIngestFromArrowStream(o, &s);
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats->documents_written, 1u);
  }
}

TEST_F(IngestArrowStreamTest, MessagesSayAStreamCannotBeResumed) {
  {
    ArrowArrayStream s = MakeStream("text", {"one", "two"});
    const std::atomic<bool> stop{true};
    auto stats = RunIngestFromArrowStream(Options("stopped", "text"), &s, &stop);
    ASSERT_FALSE(stats.ok());
    EXPECT_TRUE(stats.status().code() == StatusCode::kAborted) << stats.status().ToString();
    EXPECT_NE(stats.status().message().find("a stream cannot be resumed: write its remaining rows to a new topic"),
              std::string::npos)
        << stats.status().ToString();
    EXPECT_EQ(stats.status().message().find("again to resume"), std::string::npos) << stats.status().ToString();
  }
  ArrowArrayStream first = MakeStream("text", {"one"});
  ASSERT_TRUE(RunIngestFromArrowStream(Options("twice", "text"), &first).ok());
  ArrowArrayStream second = MakeStream("text", {"one"});
  auto stats = RunIngestFromArrowStream(Options("twice", "text"), &second);
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.status().message().find("was written by another ingest"), std::string::npos);
  EXPECT_NE(stats.status().message().find("an Arrow stream's run cannot be resumed or added to a topic that holds "
                                          "records; write it to a new topic"),
            std::string::npos)
      << stats.status().ToString();
  EXPECT_EQ(stats.status().message().find("resuming needs"), std::string::npos) << stats.status().ToString();
}

}  // namespace
}  // namespace tokenfeed::ingest
