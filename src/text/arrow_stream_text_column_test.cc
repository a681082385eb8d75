// ArrowStreamTextColumn on streams built here by hand, as a producer would
// hand them over through the C data interface: utf8, large utf8, string_view
// and dictionary columns, offsets and slices, nested structs, nulls, and
// malformed batches, each refused with its batch and row; every batch, the
// schema and the stream released exactly once, also on errors.
#include "text/arrow_stream_text_column.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "text/document_reader.h"

namespace tokenfeed::text {
namespace {

using Texts = std::vector<std::optional<std::string>>;

struct Releases {
  int batches = 0;
  int schemas = 0;
  int streams = 0;
};
Releases g_released;

// An array and the memory behind it; the root's release frees the tree.
struct Node {
  std::vector<std::vector<uint8_t>> storage;
  std::vector<const void*> buffers;
  std::vector<std::unique_ptr<Node>> child_nodes;
  std::vector<ArrowArray*> children;
  std::unique_ptr<Node> dictionary;
  ArrowArray array{};

  // Points the ArrowArray at what this node holds (after edits).
  ArrowArray* Wire() {
    array.n_buffers = static_cast<int64_t>(buffers.size());
    array.buffers = buffers.data();
    children.clear();
    for (auto& c : child_nodes) children.push_back(c->Wire());
    array.n_children = static_cast<int64_t>(children.size());
    array.children = children.data();
    array.dictionary = dictionary ? dictionary->Wire() : nullptr;
    array.release = [](ArrowArray* a) { a->release = nullptr; };  // a child: its root frees it
    return &array;
  }
  template <typename T>
  const void* Add(const std::vector<T>& values) {
    storage.emplace_back(values.size() * sizeof(T) + 1);
    if (!values.empty()) std::memcpy(storage.back().data(), values.data(), values.size() * sizeof(T));
    return storage.back().data();
  }
};

// Moves a tree into a root ArrowArray that owns it.
ArrowArray Root(std::unique_ptr<Node> node) {
  ArrowArray a = *node->Wire();
  a.private_data = node.release();
  a.release = [](ArrowArray* self) {
    delete static_cast<Node*>(self->private_data);
    self->release = nullptr;
    ++g_released.batches;
  };
  return a;
}

const void* Validity(Node& n, const Texts& values, int64_t* nulls) {
  std::vector<uint8_t> bits((values.size() + 7) / 8);
  *nulls = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i]) bits[i / 8] |= uint8_t(1u << (i % 8));
    else ++*nulls;
  }
  return *nulls ? n.Add(bits) : nullptr;
}

template <typename Offset>
std::unique_ptr<Node> StringArray(const Texts& values) {
  auto n = std::make_unique<Node>();
  std::vector<Offset> offsets{0};
  std::string data;
  for (const auto& v : values) {
    if (v) data += *v;
    offsets.push_back(static_cast<Offset>(data.size()));
  }
  n->array.length = static_cast<int64_t>(values.size());
  n->buffers = {Validity(*n, values, &n->array.null_count), n->Add(offsets),
                n->Add(std::vector<char>(data.begin(), data.end()))};
  return n;
}
std::unique_ptr<Node> Utf8(const Texts& values) { return StringArray<int32_t>(values); }
std::unique_ptr<Node> LargeUtf8(const Texts& values) { return StringArray<int64_t>(values); }

// string_view: texts up to 12 bytes inline, longer ones in two data buffers.
std::unique_ptr<Node> Utf8View(const Texts& values) {
  auto n = std::make_unique<Node>();
  std::vector<uint8_t> views(16 * values.size());
  std::string data[2];
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string v = values[i].value_or("");
    const auto length = static_cast<int32_t>(v.size());
    std::memcpy(&views[16 * i], &length, 4);
    if (v.size() <= 12) {
      std::memcpy(&views[16 * i + 4], v.data(), v.size());
    } else {
      const int32_t buffer = static_cast<int32_t>(i % 2);
      const auto offset = static_cast<int32_t>(data[buffer].size());
      data[buffer] += v;
      std::memcpy(&views[16 * i + 4], v.data(), 4);
      std::memcpy(&views[16 * i + 8], &buffer, 4);
      std::memcpy(&views[16 * i + 12], &offset, 4);
    }
  }
  n->array.length = static_cast<int64_t>(values.size());
  const std::vector<int64_t> sizes{static_cast<int64_t>(data[0].size()), static_cast<int64_t>(data[1].size())};
  n->buffers = {Validity(*n, values, &n->array.null_count), n->Add(views),
                n->Add(std::vector<char>(data[0].begin(), data[0].end())),
                n->Add(std::vector<char>(data[1].begin(), data[1].end())), n->Add(sizes)};
  return n;
}

std::unique_ptr<Node> Struct(int64_t length, std::vector<std::unique_ptr<Node>> children,
                             std::vector<bool> valid = {}) {
  auto n = std::make_unique<Node>();
  n->array.length = length;
  n->buffers = {nullptr};
  if (!valid.empty()) {
    std::vector<uint8_t> bits((valid.size() + 7) / 8);
    for (size_t i = 0; i < valid.size(); ++i) {
      if (valid[i]) bits[i / 8] |= uint8_t(1u << (i % 8));
      else ++n->array.null_count;
    }
    n->buffers[0] = n->Add(bits);
  }
  n->child_nodes = std::move(children);
  return n;
}

template <typename... Children>
std::unique_ptr<Node> Batch(int64_t length, Children... children) {
  std::vector<std::unique_ptr<Node>> list;
  (list.push_back(std::move(children)), ...);
  return Struct(length, std::move(list));
}

// A schema tree; the root's release frees it.
struct SchemaNode {
  std::string format, name;
  std::vector<std::unique_ptr<SchemaNode>> child_nodes;
  std::unique_ptr<SchemaNode> dictionary;
  std::vector<ArrowSchema*> children;
  ArrowSchema schema{};

  ArrowSchema* Wire() {
    schema.format = format.c_str();
    schema.name = name.c_str();
    children.clear();
    for (auto& c : child_nodes) children.push_back(c->Wire());
    schema.n_children = static_cast<int64_t>(children.size());
    schema.children = children.data();
    schema.dictionary = dictionary ? dictionary->Wire() : nullptr;
    schema.release = [](ArrowSchema* s) { s->release = nullptr; };
    return &schema;
  }
};

std::unique_ptr<SchemaNode> Field(std::string name, std::string format,
                                  std::vector<std::unique_ptr<SchemaNode>> children = {}) {
  auto s = std::make_unique<SchemaNode>();
  s->name = std::move(name);
  s->format = std::move(format);
  s->child_nodes = std::move(children);
  return s;
}

template <typename... F>
std::vector<std::unique_ptr<SchemaNode>> Fields(F... fields) {
  std::vector<std::unique_ptr<SchemaNode>> list;
  (list.push_back(std::move(fields)), ...);
  return list;
}

// A producer: the batches in order, optionally failing at one with a message.
struct Producer {
  std::unique_ptr<SchemaNode> schema;
  std::vector<ArrowArray> batches;
  size_t next = 0;
  int fail_at = -1;
  std::string error = "the generator raised ValueError: boom";
};

ArrowArrayStream MakeStream(std::unique_ptr<Producer> p) {
  ArrowArrayStream s{};
  s.private_data = p.release();
  s.get_schema = [](ArrowArrayStream* self, ArrowSchema* out) {
    auto* producer = static_cast<Producer*>(self->private_data);
    // Hand over a fresh tree each time: the consumer releases it.
    std::function<std::unique_ptr<SchemaNode>(const SchemaNode&)> clone = [&](const SchemaNode& n) {
      auto c = std::make_unique<SchemaNode>();
      c->format = n.format;
      c->name = n.name;
      for (const auto& k : n.child_nodes) c->child_nodes.push_back(clone(*k));
      if (n.dictionary) c->dictionary = clone(*n.dictionary);
      return c;
    };
    std::unique_ptr<SchemaNode> copy = clone(*producer->schema);
    *out = *copy->Wire();
    out->private_data = copy.release();
    out->release = [](ArrowSchema* schema) {
      delete static_cast<SchemaNode*>(schema->private_data);
      schema->release = nullptr;
      ++g_released.schemas;
    };
    return 0;
  };
  s.get_next = [](ArrowArrayStream* self, ArrowArray* out) {
    auto* producer = static_cast<Producer*>(self->private_data);
    if (static_cast<int>(producer->next) == producer->fail_at) return EIO;
    if (producer->next == producer->batches.size()) {
      out->release = nullptr;
      return 0;
    }
    *out = producer->batches[producer->next];
    producer->batches[producer->next++].release = nullptr;
    return 0;
  };
  s.get_last_error = [](ArrowArrayStream* self) {
    return static_cast<Producer*>(self->private_data)->error.c_str();
  };
  s.release = [](ArrowArrayStream* self) {
    auto* producer = static_cast<Producer*>(self->private_data);
    for (ArrowArray& b : producer->batches) {
      if (b.release) b.release(&b);
    }
    delete producer;
    self->release = nullptr;
    ++g_released.streams;
  };
  return s;
}

class ArrowStreamTextColumnTest : public ::testing::Test {
 protected:
  void SetUp() override { g_released = {}; }

  // A stream of `batches` under `schema`; opened on `field`.
  Result<std::unique_ptr<ArrowStreamTextColumn>> Open(std::unique_ptr<SchemaNode> schema,
                                                      std::vector<std::unique_ptr<Node>> batches,
                                                      std::string_view field = "text", int fail_at = -1) {
    auto p = std::make_unique<Producer>();
    p->schema = std::move(schema);
    p->fail_at = fail_at;
    made_ = static_cast<int>(batches.size());
    for (auto& b : batches) p->batches.push_back(Root(std::move(b)));
    stream_ = MakeStream(std::move(p));
    auto column = ArrowStreamTextColumn::Open(&stream_, field);
    EXPECT_EQ(stream_.release, nullptr) << "taken over";
    return column;
  }

  // Every row until the end or an error (returned, with the rows before).
  static Status ReadAll(TableTextColumn& c, Texts* out, std::vector<uint32_t>* batches = nullptr) {
    TableTextColumn::Row row;
    for (;;) {
      Result<bool> got = c.Next(&row);
      if (!got.ok()) return got.status();
      if (!*got) return Status::OK();
      EXPECT_EQ(row.index, out->size());
      out->push_back(row.text ? std::optional<std::string>(std::string(*row.text)) : std::nullopt);
      if (batches) batches->push_back(row.row_group);
    }
  }

  void ExpectAllReleased() {
    EXPECT_EQ(g_released.batches, made_);
    EXPECT_EQ(g_released.schemas, 1);
    EXPECT_EQ(g_released.streams, 1);
  }

  ArrowArrayStream stream_{};
  int made_ = 0;
};

std::unique_ptr<SchemaNode> TextSchema(std::string format = "u") {
  return Field("", "+s", Fields(Field("id", "l"), Field("text", std::move(format))));
}

std::unique_ptr<Node> Int64s(int64_t n) {
  auto a = std::make_unique<Node>();
  a->array.length = n;
  a->buffers = {nullptr, a->Add(std::vector<int64_t>(n, 7))};
  return a;
}

template <typename... B>
std::vector<std::unique_ptr<Node>> Batches(B... b) {
  std::vector<std::unique_ptr<Node>> list;
  (list.push_back(std::move(b)), ...);
  return list;
}

TEST_F(ArrowStreamTextColumnTest, ReadsEveryBatchWithNullsAsViews) {
  {
    auto c = Open(TextSchema(), Batches(Batch(3, Int64s(3), Utf8({"one", std::nullopt, "three"})),
                                         Batch(0, Int64s(0), Utf8({})), Batch(2, Int64s(2), Utf8({"", "five"}))));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    Texts got;
    std::vector<uint32_t> batches;
    ASSERT_TRUE(ReadAll(**c, &got, &batches).ok());
    EXPECT_EQ(got, (Texts{"one", std::nullopt, "three", "", "five"}));
    EXPECT_EQ(batches, (std::vector<uint32_t>{0, 0, 0, 2, 2}));
    EXPECT_EQ((*c)->rows(), 5u);
    EXPECT_EQ((*c)->row_groups(), 3u);
    EXPECT_EQ((*c)->file_bytes(), 12u);
    EXPECT_EQ(g_released.batches, 3) << "each batch once the next is asked for, the last at the end";
  }
  ExpectAllReleased();
}

TEST_F(ArrowStreamTextColumnTest, EmptyTextsNeedNoDataBuffer) {
  auto text = Utf8({"", ""});
  text->buffers[2] = nullptr;
  std::vector<int32_t> fives{5, 5, 5};  // equal offsets that do not start at 0
  text->buffers[1] = text->Add(fives);
  auto c = Open(TextSchema(), Batches(Batch(2, Int64s(2), std::move(text))));
  ASSERT_TRUE(c.ok());
  Texts got;
  ASSERT_TRUE(ReadAll(**c, &got).ok());
  EXPECT_EQ(got, (Texts{"", ""}));
}

TEST_F(ArrowStreamTextColumnTest, LargeUtf8AndStringView) {
  const Texts texts{"short", std::nullopt, "a text longer than twelve bytes", "exactly12byt", "another long one!!"};
  for (const std::string format : {"U", "vu"}) {
    SetUp();
    {
      auto c = Open(TextSchema(format),
                    Batches(Batch(5, Int64s(5), format == "U" ? LargeUtf8(texts) : Utf8View(texts))));
      ASSERT_TRUE(c.ok()) << c.status().ToString();
      Texts got;
      ASSERT_TRUE(ReadAll(**c, &got).ok());
      EXPECT_EQ(got, texts) << format;
    }
    ExpectAllReleased();
  }
}

TEST_F(ArrowStreamTextColumnTest, DictionaryOfStrings) {
  auto schema = TextSchema("i");
  schema->child_nodes[1]->dictionary = Field("", "u");
  auto indices = std::make_unique<Node>();
  indices->array.length = 5;
  // Row 3 is a null index; value 2 of the dictionary is null.
  const std::vector<int32_t> idx{1, 0, 1, 99, 2};
  indices->buffers = {indices->Add(std::vector<uint8_t>{0b10111}), indices->Add(idx)};
  indices->array.null_count = 1;
  indices->dictionary = Utf8({"zero", "one", std::nullopt});
  {
    auto c = Open(std::move(schema), Batches(Batch(5, Int64s(5), std::move(indices))));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    Texts got;
    ASSERT_TRUE(ReadAll(**c, &got).ok());
    EXPECT_EQ(got, (Texts{"one", "zero", "one", std::nullopt, std::nullopt}));
  }
  ExpectAllReleased();
}

TEST_F(ArrowStreamTextColumnTest, HonoursOffsetsOfTheBatchAndTheColumn) {
  // The batch starts at its row 1; the column's own offset adds 2 more.
  auto text = Utf8({"x", "y", "z", "a", "b", "c"});
  text->array.offset = 2;
  text->array.length = 4;
  auto batch = Batch(2, Int64s(3), std::move(text));
  batch->array.offset = 1;
  batch->array.length = 2;
  auto c = Open(TextSchema(), Batches(std::move(batch)));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Texts got;
  ASSERT_TRUE(ReadAll(**c, &got).ok());
  EXPECT_EQ(got, (Texts{"a", "b"}));
}

TEST_F(ArrowStreamTextColumnTest, NestedPathNullStructAndDottedName) {
  auto make = [&] {
    std::vector<std::unique_ptr<Node>> inner;
    inner.push_back(Utf8({"b0", "b1", "b2"}));
    return Batch(3, Struct(3, std::move(inner), {true, false, true}), Utf8({"d0", "d1", "d2"}));
  };
  {
    // A column named with a dot is taken first.
    auto c = Open(Field("", "+s", Fields(Field("meta", "+s", Fields(Field("body", "u"))), Field("meta.body", "u"))),
                  Batches(make()), "meta.body");
    ASSERT_TRUE(c.ok());
    Texts got;
    ASSERT_TRUE(ReadAll(**c, &got).ok());
    EXPECT_EQ(got, (Texts{"d0", "d1", "d2"}));
  }
  {
    auto only_struct = Field("", "+s", Fields(Field("meta", "+s", Fields(Field("body", "u"))), Field("other", "u")));
    auto c = Open(std::move(only_struct), Batches(make()), "meta.body");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    Texts got;
    ASSERT_TRUE(ReadAll(**c, &got).ok());
    EXPECT_EQ(got, (Texts{"b0", std::nullopt, "b2"})) << "a null struct makes its field null";
  }
}

TEST_F(ArrowStreamTextColumnTest, MissingOrNonStringColumnsAreNamed) {
  auto schema = [] {
    return Field("", "+s", Fields(Field("text", "u"), Field("n", "l"), Field("meta", "+s", Fields(Field("a", "l")))));
  };
  struct Case {
    std::string field, message;
  } cases[] = {
      {"body", "the Arrow stream has no column 'body' (its columns: text, n, meta); give the text column with field="},
      {"n", "the Arrow stream's column 'n' is int64, not a string column; give the text column with field="},
      {"n.x", "the Arrow stream's column 'n.x': 'n' is int64, not a struct with a field 'x'"},
      {"meta.b", "the Arrow stream has no column 'meta.b' ('meta' has the fields: a)"},
      {"meta", "the Arrow stream's column 'meta' is struct<a: int64>, not a string column"},
  };
  for (const Case& k : cases) {
    SetUp();
    auto c = Open(schema(), Batches(), k.field);
    ASSERT_FALSE(c.ok()) << k.field;
    EXPECT_TRUE(c.status().code() == StatusCode::kInvalidArgument);
    EXPECT_NE(c.status().message().find(k.message), std::string::npos) << c.status().message();
    EXPECT_EQ(g_released.schemas, 1);
    EXPECT_EQ(g_released.streams, 1);
  }
}

// A malformed second batch: the first is read, then Corruption naming batch
// 1 (and the row where there is one); everything is released once.
TEST_F(ArrowStreamTextColumnTest, MalformedBatchesAreRefusedWithBatchAndRow) {
  struct Case {
    std::string name;
    std::function<std::unique_ptr<Node>()> batch;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"decreasing offsets",
       [] {
         auto t = Utf8({"aa", "bb", "cc"});
         reinterpret_cast<int32_t*>(t->storage[0].data())[2] = 1;  // offsets 0 2 1 6
         return Batch(3, Int64s(3), std::move(t));
       },
       "'arrow-stream' batch 1, row 1 of the batch (row 3 of the stream), column 'text': the offsets decrease "
       "(from 2 to 1)"},
      {"negative first offset",
       [] {
         auto t = Utf8({"aa"});
         reinterpret_cast<int32_t*>(t->storage[0].data())[0] = -4;
         return Batch(1, Int64s(1), std::move(t));
       },
       "the offset of the first row is negative (-4)"},
      {"offset past the child's length",
       [] {
         auto b = Batch(2, Int64s(3), Utf8({"a", "b"}));
         b->array.offset = 1;  // rows 1..2 of a 2-row child
         return b;
       },
       "'arrow-stream' batch 1, column 'text': the batch: the child 'text' has 2 rows, fewer than the 3 its "
       "parent's offset and length need"},
      {"missing offsets buffer",
       [] {
         auto t = Utf8({"a"});
         t->buffers[1] = nullptr;
         return Batch(1, Int64s(1), std::move(t));
       },
       "the offsets buffer is missing"},
      {"missing data buffer",
       [] {
         auto t = Utf8({"a"});
         t->buffers[2] = nullptr;
         return Batch(1, Int64s(1), std::move(t));
       },
       "the data buffer is missing"},
      {"nulls without a bitmap",
       [] {
         auto t = Utf8({"a"});
         t->array.null_count = 1;
         return Batch(1, Int64s(1), std::move(t));
       },
       "1 nulls but no validity bitmap"},
      {"wrong number of children",
       [] { return Batch(1, Utf8({"a"})); },
       "the batch: 1 children where the schema has 2"},
      {"wrong number of buffers",
       [] {
         auto t = Utf8({"a"});
         t->buffers.pop_back();
         return Batch(1, Int64s(1), std::move(t));
       },
       "a string array with 2 buffers, not 3 (validity, offsets, data)"},
      {"children under a string",
       [] {
         auto t = Utf8({"a"});
         t->child_nodes.push_back(Utf8({"b"}));
         return Batch(1, Int64s(1), std::move(t));
       },
       "a string array with 1 children, not 0"},
      {"negative length",
       [] {
         auto b = Batch(1, Int64s(1), Utf8({"a"}));
         b->array.length = -1;
         return b;
       },
       "a negative length or offset (-1, 0)"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    SetUp();
    {
      auto c = Open(TextSchema(), Batches(Batch(2, Int64s(2), Utf8({"good", "rows"})), k.batch(),
                                           Batch(1, Int64s(1), Utf8({"never read"}))));
      ASSERT_TRUE(c.ok()) << c.status().ToString();
      Texts got;
      Status s = ReadAll(**c, &got);
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
      EXPECT_NE(s.message().find(k.message), std::string::npos) << s.message();
      EXPECT_EQ(got, (Texts{"good", "rows"}));
      TableTextColumn::Row row;
      EXPECT_FALSE((*c)->Next(&row).value()) << "finished after the error";
      EXPECT_EQ(g_released.batches, 2) << "the first and the bad one";
    }
    ExpectAllReleased();
  }
}

TEST_F(ArrowStreamTextColumnTest, BadDictionaryIndexAndStringView) {
  {
    auto schema = TextSchema("C");
    schema->child_nodes[1]->dictionary = Field("", "u");
    auto indices = std::make_unique<Node>();
    indices->array.length = 2;
    indices->buffers = {nullptr, indices->Add(std::vector<uint8_t>{0, 5})};
    indices->dictionary = Utf8({"a", "b"});
    auto c = Open(std::move(schema), Batches(Batch(2, Int64s(2), std::move(indices))));
    ASSERT_TRUE(c.ok());
    Texts got;
    Status s = ReadAll(**c, &got);
    EXPECT_NE(s.message().find("batch 0, row 1 of the batch (row 1 of the stream), column 'text': dictionary "
                               "index 5 is outside the dictionary's 2 values"),
              std::string::npos)
        << s.message();
  }
  ExpectAllReleased();
  SetUp();
  {
    auto view = Utf8View({"a string longer than twelve"});
    const int32_t past = 100;
    std::memcpy(view->storage[0].data() + 12, &past, 4);  // its offset
    auto c = Open(TextSchema("vu"), Batches(Batch(1, Int64s(1), std::move(view))));
    ASSERT_TRUE(c.ok());
    Texts got;
    Status s = ReadAll(**c, &got);
    EXPECT_NE(s.message().find("row 0 of the batch (row 0 of the stream), column 'text': a string view of bytes "
                               "100+27 lies past the end of its data buffer (27 bytes)"),
              std::string::npos)
        << s.message();
  }
  ExpectAllReleased();
}

TEST_F(ArrowStreamTextColumnTest, AProducerErrorNamesTheBatchAndItsMessage) {
  {
    auto c = Open(TextSchema(), Batches(Batch(1, Int64s(1), Utf8({"first"})), Batch(1, Int64s(1), Utf8({"x"}))),
                  "text", /*fail_at=*/1);
    ASSERT_TRUE(c.ok());
    Texts got;
    Status s = ReadAll(**c, &got);
    EXPECT_TRUE(s.code() == StatusCode::kIoError);
    EXPECT_EQ(s.message(), "'arrow-stream': the producer failed to give batch 1 (error " + std::to_string(EIO) +
                               ": the generator raised ValueError: boom)");
    EXPECT_EQ(got, (Texts{"first"}));
  }
  ExpectAllReleased();
}

TEST_F(ArrowStreamTextColumnTest, DestroyedMidStreamReleasesEverythingOnce) {
  {
    auto c = Open(TextSchema(), Batches(Batch(1, Int64s(1), Utf8({"a"})), Batch(1, Int64s(1), Utf8({"b"}))));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    TableTextColumn::Row row;
    ASSERT_TRUE((*c)->Next(&row).value());
  }
  ExpectAllReleased();
  ArrowArrayStream released{};
  auto again = ArrowStreamTextColumn::Open(&released, "text");
  EXPECT_TRUE(again.status().code() == StatusCode::kInvalidArgument);
  EXPECT_NE(again.status().message().find("already consumed or released"), std::string::npos);
}

TEST_F(ArrowStreamTextColumnTest, DocumentReaderNamesTheStreamAndRows) {
  {
    auto c = Open(TextSchema(), Batches(Batch(3, Int64s(3), Utf8({"one", std::nullopt, "thr\xff"}))));
    ASSERT_TRUE(c.ok());
    auto reader = DocumentReader::OpenColumn(std::move(*c), "arrow-stream", ReaderOptions{});
    ASSERT_TRUE(reader.ok());
    auto& r = **reader;
    ASSERT_EQ(r.Next().value(), ReadEvent::kDocument);
    EXPECT_EQ(r.document().text, "one");
    EXPECT_EQ(r.document().path, "arrow-stream");
    EXPECT_EQ(r.document().position.line, 1u);
    ASSERT_EQ(r.Next().value(), ReadEvent::kReject);
    EXPECT_EQ(r.reject().reason, DropReason::kMissingField);
    EXPECT_EQ(r.reject().line, 2u);
    ASSERT_EQ(r.Next().value(), ReadEvent::kDocument);
    EXPECT_EQ(r.document().text, "thr\xEF\xBF\xBD");
    EXPECT_EQ(r.document().position.byte_offset, 2u);
    ASSERT_EQ(r.Next().value(), ReadEvent::kFileEnd);
    ASSERT_EQ(r.Next().value(), ReadEvent::kEnd);
  }
  ExpectAllReleased();
}

// A stream's column is named by the stream's rules: a top-level name may have
// dots anywhere (the JSON field's rules, which refuse ".a..b.", do not apply).
TEST_F(ArrowStreamTextColumnTest, DocumentReaderTakesAColumnNamedWithDotsAnywhere) {
  {
    auto c = Open(Field("", "+s", Fields(Field(".a..b.", "u"))), Batches(Batch(2, Utf8({"x", "y"}))), ".a..b.");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ReaderOptions options;
    options.json_field = ".a..b.";
    auto reader = DocumentReader::OpenColumn(std::move(*c), "arrow-stream", options);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    ASSERT_EQ((*reader)->Next().value(), ReadEvent::kDocument);
    EXPECT_EQ((*reader)->document().text, "x");
    ASSERT_EQ((*reader)->Next().value(), ReadEvent::kDocument);
    EXPECT_EQ((*reader)->document().text, "y");
  }
  ExpectAllReleased();
}

// Streams whose callbacks break the interface before any batch.
TEST_F(ArrowStreamTextColumnTest, BrokenProducersAreRefusedAndReleasedOnce) {
  auto base = [] {
    ArrowArrayStream s{};
    s.get_schema = [](ArrowArrayStream*, ArrowSchema*) { return EINVAL; };
    s.get_next = [](ArrowArrayStream*, ArrowArray*) { return EIO; };
    s.get_last_error = [](ArrowArrayStream*) -> const char* { return "no schema today"; };
    s.release = [](ArrowArrayStream* self) {
      self->release = nullptr;
      ++g_released.streams;
    };
    return s;
  };
  {
    // get_schema fails after writing a release callback: the schema is not
    // valid, so the consumer must not release it.
    ArrowArrayStream s = base();
    s.get_schema = [](ArrowArrayStream*, ArrowSchema* out) {
      out->format = "+s";
      out->release = [](ArrowSchema* self) {
        self->release = nullptr;
        ++g_released.schemas;
      };
      return EINVAL;
    };
    auto c = ArrowStreamTextColumn::Open(&s, "text");
    ASSERT_FALSE(c.ok());
    EXPECT_TRUE(c.status().code() == StatusCode::kIoError) << c.status().ToString();
    EXPECT_NE(c.status().message().find("could not give the schema (error " + std::to_string(EINVAL) +
                                        ": no schema today)"),
              std::string::npos)
        << c.status().ToString();
    EXPECT_EQ(g_released.schemas, 0) << "a schema given with an error is released";
    EXPECT_EQ(g_released.streams, 1);
  }
  for (int missing = 0; missing < 3; ++missing) {
    SetUp();
    ArrowArrayStream s = base();
    if (missing == 0) s.get_schema = nullptr;
    if (missing == 1) s.get_next = nullptr;
    if (missing == 2) s.get_last_error = nullptr;
    auto c = ArrowStreamTextColumn::Open(&s, "text");
    ASSERT_FALSE(c.ok()) << missing;
    EXPECT_NE(c.status().message().find("the Arrow stream lacks a callback"), std::string::npos)
        << c.status().ToString();
    EXPECT_EQ(s.release, nullptr);
    EXPECT_EQ(g_released.streams, 1) << missing;
  }
  {
    SetUp();
    ArrowArrayStream s = base();
    s.get_schema = [](ArrowArrayStream*, ArrowSchema* out) {
      *out = ArrowSchema{};
      out->format = "+s";
      return 0;  // but release is null: a released schema
    };
    auto c = ArrowStreamTextColumn::Open(&s, "text");
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.status().message().find("the Arrow stream gave a released schema"), std::string::npos)
        << c.status().ToString();
    EXPECT_EQ(g_released.streams, 1);
  }
}

// A copy of `bytes` bytes of `p` at an odd address: the C data interface
// only recommends aligned buffers, so a valid producer may hand these over.
const void* Unaligned(Node& n, const void* p, size_t bytes) {
  n.storage.emplace_back(bytes + 1);
  std::memcpy(n.storage.back().data() + 1, p, bytes);
  return n.storage.back().data() + 1;
}

TEST_F(ArrowStreamTextColumnTest, UnalignedBuffersAreRead) {
  const Texts texts{"short", std::nullopt, "a text longer than twelve bytes", "another long one!!"};
  for (const std::string format : {"u", "U", "vu", "dictionary"}) {
    SCOPED_TRACE(format);
    SetUp();
    {
      std::unique_ptr<Node> column;
      std::unique_ptr<SchemaNode> schema;
      if (format == "u") {
        column = Utf8(texts);
        column->buffers[1] = Unaligned(*column, column->buffers[1], 4 * (texts.size() + 1));
      } else if (format == "U") {
        column = LargeUtf8(texts);
        column->buffers[1] = Unaligned(*column, column->buffers[1], 8 * (texts.size() + 1));
      } else if (format == "vu") {
        column = Utf8View(texts);
        column->buffers[1] = Unaligned(*column, column->buffers[1], 16 * texts.size());
        column->buffers[4] = Unaligned(*column, column->buffers[4], 16);  // the sizes
      } else {
        column = std::make_unique<Node>();
        column->array.length = 4;
        const std::vector<int32_t> idx{0, 1, 2, 3};
        column->buffers = {nullptr, nullptr};
        column->buffers[1] = Unaligned(*column, idx.data(), 4 * idx.size());
        column->dictionary = Utf8(texts);
        column->dictionary->buffers[1] =
            Unaligned(*column->dictionary, column->dictionary->buffers[1], 4 * (texts.size() + 1));
      }
      schema = TextSchema(format == "dictionary" ? "i" : format);
      if (format == "dictionary") schema->child_nodes[1]->dictionary = Field("", "u");
      auto c = Open(std::move(schema), Batches(Batch(4, Int64s(4), std::move(column))));
      ASSERT_TRUE(c.ok()) << c.status().ToString();
      Texts got;
      ASSERT_TRUE(ReadAll(**c, &got).ok());
      EXPECT_EQ(got, texts);
    }
    ExpectAllReleased();
  }
}

// Offsets whose slots cannot be addressed: the offset and length overflow,
// or a slot's bytes (16 a string view) lie beyond 2^63.
TEST_F(ArrowStreamTextColumnTest, OffsetsNearTheLimitAreRefused) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  struct Case {
    std::string name, format;
    int64_t offset;
    std::string message;
  } cases[] = {
      {"offset + length overflow", "u", kMax - 1, "batch 0, column 'text': the offset and length overflow"},
      {"utf8 past 2^63 bytes", "u", kMax / 16 + 1, "address more than 2^63 bytes"},
      {"string_view past 2^63 bytes", "vu", kMax / 16 + 1, "address more than 2^63 bytes"},
      {"dictionary indices past 2^63 bytes", "l", kMax / 16 + 1, "address more than 2^63 bytes"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    SetUp();
    {
      std::unique_ptr<Node> column;
      if (k.format == "u") column = Utf8({"a", "b"});
      if (k.format == "vu") column = Utf8View({"a", "b"});
      if (k.format == "l") {
        column = std::make_unique<Node>();
        column->buffers = {nullptr, column->Add(std::vector<int64_t>{0, 0})};
        column->dictionary = Utf8({"a"});
      }
      column->array.length = kMax;  // a child as long as the offset needs
      auto schema = TextSchema(k.format == "l" ? "l" : k.format);
      if (k.format == "l") schema->child_nodes[1]->dictionary = Field("", "u");
      auto ids = Int64s(2);
      ids->array.length = kMax;
      auto batch = Batch(2, std::move(ids), std::move(column));
      batch->array.offset = k.offset;
      auto c = Open(std::move(schema), Batches(std::move(batch)));
      ASSERT_TRUE(c.ok()) << c.status().ToString();
      Texts got;
      Status s = ReadAll(**c, &got);
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
      EXPECT_NE(s.message().find(k.message), std::string::npos) << s.message();
    }
    ExpectAllReleased();
  }
}

// A dictionary's values are named as such, not as rows of the batch.
TEST_F(ArrowStreamTextColumnTest, BadDictionaryValuesAreNamedByTheirIndex) {
  auto run = [&](std::unique_ptr<Node> values, const std::string& format, const std::string& message) {
    SetUp();
    {
      auto schema = TextSchema("c");
      schema->child_nodes[1]->dictionary = Field("", format);
      auto indices = std::make_unique<Node>();
      indices->array.length = 2;
      indices->buffers = {nullptr, indices->Add(std::vector<int8_t>{0, 0})};
      indices->dictionary = std::move(values);
      auto c = Open(std::move(schema), Batches(Batch(2, Int64s(2), std::move(indices))));
      ASSERT_TRUE(c.ok()) << c.status().ToString();
      Texts got;
      Status s = ReadAll(**c, &got);
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
      EXPECT_NE(s.message().find(message), std::string::npos) << s.message();
      EXPECT_EQ(s.message().find("of the batch"), std::string::npos) << s.message();
    }
    ExpectAllReleased();
  };
  auto decreasing = Utf8({"aa", "bb", "cc"});
  reinterpret_cast<int32_t*>(decreasing->storage[0].data())[2] = 1;  // offsets 0 2 1 6
  run(std::move(decreasing), "u",
      "'arrow-stream' dictionary value 1 of batch 0, column 'text': the offsets decrease (from 2 to 1)");
  auto view = Utf8View({"x", "a string longer than twelve"});
  const int32_t past = 100;
  std::memcpy(view->storage[0].data() + 16 + 12, &past, 4);  // value 1's offset
  run(std::move(view), "vu",
      "'arrow-stream' dictionary value 1 of batch 0, column 'text': a string view of bytes 100+27 lies past the "
      "end of its data buffer");
}

TEST_F(ArrowStreamTextColumnTest, DictionaryValuesWithAnOffsetAndNullStructsWithAnOffset) {
  {
    // The dictionary's values start at their slot 1; index 0 is that slot.
    auto schema = TextSchema("c");
    schema->child_nodes[1]->dictionary = Field("", "u");
    auto indices = std::make_unique<Node>();
    indices->array.length = 3;
    indices->buffers = {nullptr, indices->Add(std::vector<int8_t>{1, 0, 1})};
    indices->dictionary = Utf8({"skipped", "zero", "one"});
    indices->dictionary->array.offset = 1;
    indices->dictionary->array.length = 2;
    auto c = Open(std::move(schema), Batches(Batch(3, Int64s(3), std::move(indices))));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    Texts got;
    ASSERT_TRUE(ReadAll(**c, &got).ok());
    EXPECT_EQ(got, (Texts{"one", "zero", "one"}));
  }
  ExpectAllReleased();
  SetUp();
  {
    // The batch starts at its slot 1 and the struct at its own slot 1: batch
    // row r is struct slot 2 + r, whose validity bit decides.
    std::vector<std::unique_ptr<Node>> inner;
    inner.push_back(Utf8({"b0", "b1", "b2", "b3", "b4"}));
    auto meta = Struct(5, std::move(inner), {true, true, false, true, false});
    meta->array.offset = 1;
    meta->array.length = 4;
    std::vector<std::unique_ptr<Node>> top;
    top.push_back(std::move(meta));
    auto batch = Struct(3, std::move(top));
    batch->array.offset = 1;
    batch->array.length = 3;
    auto c = Open(Field("", "+s", Fields(Field("meta", "+s", Fields(Field("body", "u"))))), Batches(std::move(batch)),
                  "meta.body");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    Texts got;
    ASSERT_TRUE(ReadAll(**c, &got).ok());
    EXPECT_EQ(got, (Texts{std::nullopt, "b3", std::nullopt}));
  }
  ExpectAllReleased();
}

// Malformed string_view and dictionary batches after a good one, as in
// MalformedBatchesAreRefusedWithBatchAndRow.
TEST_F(ArrowStreamTextColumnTest, MalformedViewsAndDictionariesAreRefused) {
  struct Case {
    std::string name;
    std::string format;  // of the column; a dictionary's values are utf8
    std::function<std::unique_ptr<Node>()> column;
    std::string message;
  };
  auto indices = [](auto values, std::unique_ptr<Node> dictionary) {
    auto n = std::make_unique<Node>();
    n->array.length = static_cast<int64_t>(values.size());
    n->buffers = {nullptr, n->Add(values)};
    n->dictionary = std::move(dictionary);
    return n;
  };
  auto long_view = [](int at, int32_t value) {
    auto v = Utf8View({"a string longer than twelve"});
    std::memcpy(v->storage[0].data() + at, &value, 4);
    return v;
  };
  const std::vector<Case> cases = {
      {"view names a buffer out of range", "vu", [&] { return long_view(8, 5); },
       "row 0 of the batch (row 2 of the stream), column 'text': a string view names data buffer 5 of 2"},
      {"view of negative length", "vu", [&] { return long_view(0, -3); },
       "row 0 of the batch (row 2 of the stream), column 'text': a string view of negative length -3"},
      {"missing sizes buffer", "vu",
       [] {
         auto v = Utf8View({"a string longer than twelve"});
         v->buffers.back() = nullptr;
         return v;
       },
       "the buffer sizes (the last buffer) are missing"},
      {"missing views buffer", "vu",
       [] {
         auto v = Utf8View({"short"});
         v->buffers[1] = nullptr;
         return v;
       },
       "the views buffer is missing"},
      {"int8 index -1", "c", [&] { return indices(std::vector<int8_t>{0, -1}, Utf8({"a", "b"})); },
       "row 1 of the batch (row 3 of the stream), column 'text': dictionary index -1 is outside the dictionary's 2 "
       "values"},
      {"uint64 index above int64", "L",
       [&] { return indices(std::vector<uint64_t>{0, uint64_t{1} << 63}, Utf8({"a", "b"})); },
       "dictionary index 9223372036854775808 is outside the dictionary's 2 values"},
      {"dictionary missing", "i", [&] { return indices(std::vector<int32_t>{0}, nullptr); },
       "the dictionary is missing"},
      {"dictionary the schema does not declare", "u",
       [] {
         auto t = Utf8({"a"});
         t->dictionary = Utf8({"b"});
         return t;
       },
       "the column has a dictionary the schema does not declare"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    SetUp();
    {
      auto schema = [&] {
        auto s = TextSchema(k.format);
        if (k.format != "u" && k.format != "vu") s->child_nodes[1]->dictionary = Field("", "u");
        return s;
      };
      std::unique_ptr<Node> good;
      if (k.format == "u") good = Utf8({"good", "rows"});
      else if (k.format == "vu") good = Utf8View({"good", "rows"});
      else if (k.format == "c") good = indices(std::vector<int8_t>{0, 1}, Utf8({"good", "rows"}));
      else if (k.format == "L") good = indices(std::vector<uint64_t>{0, 1}, Utf8({"good", "rows"}));
      else good = indices(std::vector<int32_t>{0, 1}, Utf8({"good", "rows"}));
      auto bad = k.column();
      const int64_t rows = bad->array.length;
      auto c = Open(schema(), Batches(Batch(2, Int64s(2), std::move(good)), Batch(rows, Int64s(rows), std::move(bad))));
      ASSERT_TRUE(c.ok()) << c.status().ToString();
      Texts got;
      Status s = ReadAll(**c, &got);
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
      EXPECT_NE(s.message().find("'arrow-stream' batch 1"), std::string::npos) << s.message();
      EXPECT_NE(s.message().find(k.message), std::string::npos) << s.message();
      EXPECT_EQ(got, (Texts{"good", "rows"}));
    }
    ExpectAllReleased();
  }
}

}  // namespace
}  // namespace tokenfeed::text
