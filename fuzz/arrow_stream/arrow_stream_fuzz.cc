// Fuzzes the reader of Arrow C streams (text/arrow_stream_text_column.h) on
// one batch of a text column whose layout (string, large string, string
// view, dictionary of strings, or a string inside a struct), length, offsets,
// validity bitmaps, views and dictionary indices come from the input. The
// buffers the harness hands over are as large as the batch's lengths and
// offsets say (the interface gives no size for a data buffer, so a producer
// that lies about that cannot be caught, and is not fuzzed); everything else
// may be inconsistent. The reader must either refuse the batch with a message
// or give texts that lie inside the buffers, and release the batch, the
// schema and the stream exactly once. Aborts on a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "text/arrow_stream_text_column.h"

namespace {

using tokenfeed::text::ArrowStreamTextColumn;
using tokenfeed::text::TableTextColumn;

[[noreturn]] void Finding(const char* what) {
  std::fprintf(stderr, "arrow_stream_fuzz: %s\n", what);
  std::abort();
}

// The input, read front to back; zeros once it runs out.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  int64_t Small(int64_t bound) { return Byte() % bound; }
  std::vector<uint8_t> Bytes(size_t n) {
    std::vector<uint8_t> out(n);
    for (auto& b : out) b = Byte();
    return out;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Releases of the root schema, the batch and the stream (the children's
// callbacks are the parents' to call, which here own nothing).
int schema_releases = 0;
int batch_releases = 0;
int stream_releases = 0;
void ReleaseSchema(ArrowSchema* s) {
  ++schema_releases;
  s->release = nullptr;
}
void ReleaseArray(ArrowArray* a) {
  ++batch_releases;
  a->release = nullptr;
}
void ReleaseChildSchema(ArrowSchema* s) { s->release = nullptr; }
void ReleaseChildArray(ArrowArray* a) { a->release = nullptr; }

// One array of the batch and the buffers it points to.
struct Node {
  ArrowArray array{};
  std::vector<const void*> buffer_list;
  std::vector<ArrowArray*> child_list;
  std::vector<std::vector<uint8_t>> owned;  // the bytes of its buffers
  const void* Own(std::vector<uint8_t> bytes) {
    owned.push_back(std::move(bytes));
    return owned.back().data();
  }
};

constexpr int64_t kDataBytes = 256;  // every string array's data buffer

// A validity bitmap for `slots` slots, or null.
const void* Bitmap(Input& in, Node& n, int64_t slots) {
  if (in.Byte() % 3 == 0) return nullptr;
  return n.Own(in.Bytes(static_cast<size_t>((slots + 7) / 8)));
}

// Offsets for `slots` slots of width W (4 or 8): small steps, sometimes back.
template <typename T>
const void* Offsets(Input& in, Node& n, int64_t slots) {
  std::vector<uint8_t> bytes(static_cast<size_t>(slots + 1) * sizeof(T));
  T at = static_cast<T>(in.Small(8));
  for (int64_t i = 0; i <= slots; ++i) {
    std::memcpy(bytes.data() + i * sizeof(T), &at, sizeof(T));
    const int step = static_cast<int8_t>(in.Byte()) % 24;  // -23 .. 23
    at = static_cast<T>(at + step);
    if (at > kDataBytes) at = kDataBytes;
  }
  return n.Own(std::move(bytes));
}

// A string array of format u, U or vu with `length` rows after `offset`.
void StringArray(Input& in, Node& n, char kind, int64_t length, int64_t offset) {
  const int64_t slots = length + offset;
  n.array.length = length;
  n.array.offset = offset;
  n.array.null_count = in.Small(3) == 0 ? 0 : -1;
  n.buffer_list.push_back(Bitmap(in, n, slots));
  if (kind == 'v') {
    std::vector<uint8_t> views = in.Bytes(static_cast<size_t>(slots) * 16);
    const int64_t variadic = 1 + in.Small(2);
    n.buffer_list.push_back(n.Own(std::move(views)));
    std::vector<uint8_t> sizes(static_cast<size_t>(variadic) * 8);
    for (int64_t b = 0; b < variadic; ++b) {
      const int64_t size = in.Small(64);
      n.buffer_list.push_back(n.Own(in.Bytes(static_cast<size_t>(size))));
      std::memcpy(sizes.data() + b * 8, &size, 8);
    }
    n.buffer_list.push_back(n.Own(std::move(sizes)));
  } else {
    n.buffer_list.push_back(kind == 'u' ? Offsets<int32_t>(in, n, slots) : Offsets<int64_t>(in, n, slots));
    n.buffer_list.push_back(n.Own(in.Bytes(kDataBytes)));
  }
  // A buffer missing (null). Dropping one instead would make the harness lie
  // about the sizes of the others (the string views' sizes buffer is told by
  // the count of buffers), which no consumer can catch.
  if (in.Small(16) == 0) n.buffer_list[static_cast<size_t>(in.Small(static_cast<int64_t>(n.buffer_list.size())))] = nullptr;
}

struct Stream {
  ArrowSchema root{};
  ArrowSchema leaf{};
  ArrowSchema inner{};  // the struct around the leaf, or the dictionary's values
  ArrowSchema* root_children[1] = {nullptr};
  ArrowSchema* inner_children[1] = {nullptr};
  Node batch;
  Node column;
  Node child;  // the struct's string child, or the dictionary's values
  bool given = false;
};

int GetSchema(ArrowArrayStream* s, ArrowSchema* out) {
  *out = static_cast<Stream*>(s->private_data)->root;
  return 0;
}
int GetNext(ArrowArrayStream* s, ArrowArray* out) {
  auto* st = static_cast<Stream*>(s->private_data);
  *out = ArrowArray{};
  if (!st->given) *out = st->batch.array;
  st->given = true;
  return 0;
}
const char* LastError(ArrowArrayStream*) { return "none"; }
void ReleaseStream(ArrowArrayStream* s) {
  ++stream_releases;
  s->release = nullptr;
}

bool Inside(std::string_view text, const Node& n) {
  if (text.empty()) return true;
  for (const auto& b : n.owned) {
    const auto* lo = reinterpret_cast<const char*>(b.data());
    if (text.data() >= lo && text.data() + text.size() <= lo + b.size()) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  Stream st;
  const int layout = static_cast<int>(in.Small(5));  // u, U, vu, dictionary, struct
  const int64_t rows = in.Small(40);
  const int64_t batch_offset = in.Small(4);

  st.root = ArrowSchema{"+s", "", nullptr, 0, 1, st.root_children, nullptr, ReleaseSchema, nullptr};
  st.root_children[0] = &st.leaf;
  const char* const kinds[] = {"u", "U", "vu"};
  std::string field = "text";
  if (layout < 3) {
    st.leaf = ArrowSchema{kinds[layout], "text", nullptr, 2, 0, nullptr, nullptr, ReleaseChildSchema, nullptr};
    StringArray(in, st.column, "uUv"[layout], rows + in.Small(3), batch_offset + in.Small(4));
  } else if (layout == 3) {
    st.inner = ArrowSchema{"u", "", nullptr, 2, 0, nullptr, nullptr, ReleaseChildSchema, nullptr};
    st.leaf = ArrowSchema{"c", "text", nullptr, 2, 0, nullptr, &st.inner, ReleaseChildSchema, nullptr};
    Node& idx = st.column;
    const int64_t slots = rows + batch_offset + in.Small(3);
    idx.array.length = slots - batch_offset;
    idx.array.offset = batch_offset;
    idx.array.null_count = -1;
    idx.buffer_list.push_back(Bitmap(in, idx, slots));
    idx.buffer_list.push_back(idx.Own(in.Bytes(static_cast<size_t>(slots))));
    StringArray(in, st.child, 'u', in.Small(12), in.Small(4));
    idx.array.dictionary = &st.child.array;
  } else {
    st.inner = ArrowSchema{"u", "text", nullptr, 2, 0, nullptr, nullptr, ReleaseChildSchema, nullptr};
    st.inner_children[0] = &st.inner;
    st.leaf = ArrowSchema{"+s", "m", nullptr, 2, 1, st.inner_children, nullptr, ReleaseChildSchema, nullptr};
    field = "m.text";
    Node& parent = st.column;
    const int64_t offset = in.Small(4);
    parent.array.length = rows + in.Small(3);
    parent.array.offset = offset;
    parent.array.null_count = -1;
    parent.buffer_list.push_back(Bitmap(in, parent, parent.array.length + offset));
    StringArray(in, st.child, 'u', in.Small(48), in.Small(4));
    parent.child_list.push_back(&st.child.array);
  }
  for (Node* n : {&st.column, &st.child}) {
    n->array.n_buffers = static_cast<int64_t>(n->buffer_list.size());
    n->array.buffers = n->buffer_list.data();
    n->array.n_children = static_cast<int64_t>(n->child_list.size());
    n->array.children = n->child_list.data();
    n->array.release = ReleaseChildArray;
  }
  ArrowArray* batch_children[1] = {&st.column.array};
  st.batch.buffer_list.push_back(nullptr);
  st.batch.array = ArrowArray{rows, 0, batch_offset, 1, 1, st.batch.buffer_list.data(), batch_children,
                              nullptr, ReleaseArray, nullptr};

  schema_releases = batch_releases = stream_releases = 0;
  {
    ArrowArrayStream stream{GetSchema, GetNext, LastError, ReleaseStream, &st};
    auto column = ArrowStreamTextColumn::Open(&stream, field, "fuzz");
    if (!column.ok()) {
      if (column.status().message().empty()) Finding("a refusal without a message");
      if (stream_releases != 1 || schema_releases != 1 || batch_releases != (st.given ? 1 : 0)) {
        Finding("a refused stream, its schema or its batch was not released exactly once");
      }
      return 0;
    }
    TableTextColumn::Row row;
    for (int64_t i = 0; i <= rows; ++i) {
      auto got = (*column)->Next(&row);
      if (!got.ok()) {
        if (got.status().message().empty()) Finding("an error without a message");
        break;
      }
      if (!*got) break;
      if (row.text && !Inside(*row.text, st.child) && !Inside(*row.text, st.column)) {
        Finding("a text outside the batch's buffers");
      }
    }
  }
  if (stream_releases != 1 || schema_releases != 1 || batch_releases != (st.given ? 1 : 0)) {
    Finding("the batch, the schema or the stream was not released exactly once");
  }
  return 0;
}
