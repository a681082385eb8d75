// Token records: one document's token ids plus where it came from (source
// path, line, byte offset, the ingest run's document sequence number) and a
// few small attributes, encoded as in docs/record_format.md. The ingest
// encodes them into a reusable buffer; the loader parses them in place with
// RecordView, which copies nothing and borrows the bytes it was given.
// This is only the wire format: it knows nothing of topics, batches or offsets.
// Thread-safety: every function is reentrant; a RecordEncoder or RecordView
// is a small value used by one thread at a time (views may be copied freely).
// Lifetime: a RecordView and its IdSpan point into the parsed bytes and are
// valid only while those bytes are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "tokenfeed/record_format.h"
#include "tokenfeed/status.h"

namespace tokenfeed::record {

// The width of the stored ids. kAuto stores u16 when every id is below 65536
// and u32 otherwise, decided per record.
enum class IdWidth : uint8_t { kAuto = 0, k16 = 2, k32 = 4 };

struct Attribute {
  std::string_view key;    // 1..255 bytes
  std::string_view value;  // the whole attribute block is at most 1024 bytes
};

// Which of BOS and EOS the document stage put around the record's document:
// "bos", "eos" or "bos,eos"; absent when neither. The loader refuses to add
// them a second time (docs/record_format.md).
inline constexpr std::string_view kEndsAttribute = "ends";

// Where a record's document came from: a line of an input file (ingest), or
// a message of a raw-text topic (serve), which gives the source fields other
// meanings (RecordFields).
enum class SourceKind : uint8_t { kFile, kMessage };

// What the document stage knows about one document. The views must stay
// valid until the record is written.
struct RecordFields {
  // kFile: the input file, the line of the document's first byte and its byte
  // position in the uncompressed input, the document's number in its ingest
  // run. kMessage: the raw topic's URI, the message's partition, its offset,
  // and its offset again. Use FileSource / MessageSource to fill them.
  SourceKind source_kind = SourceKind::kFile;
  std::string_view source_path;     // at most 4096 bytes
  uint64_t source_line = 0;
  uint64_t source_byte_offset = 0;
  uint64_t doc_seq = 0;
  std::span<const Attribute> attributes;
  IdWidth id_width = IdWidth::kAuto;

  void FileSource(std::string_view path, uint64_t line, uint64_t byte_offset, uint64_t sequence) {
    source_kind = SourceKind::kFile;
    source_path = path;
    source_line = line;
    source_byte_offset = byte_offset;
    doc_seq = sequence;
  }
  void MessageSource(std::string_view topic_uri, uint32_t partition, uint64_t offset) {
    source_kind = SourceKind::kMessage;
    source_path = topic_uri;
    source_line = partition;
    source_byte_offset = offset;
    doc_seq = offset;
  }
};

// Encodes records without allocating: Prepare checks the fields and sizes the
// record; WriteTo then fills caller-owned memory (for example space reserved
// inside a log batch). Hot path: one pass over the ids to pick the width and
// one to store them.
class RecordEncoder {
 public:
  // InvalidArgument when a field breaks a limit of the format (the message
  // names the field, its size and the limit). The spans in `fields` and
  // `ids` must stay valid until WriteTo.
  Status Prepare(const RecordFields& fields, std::span<const uint32_t> ids);
  // The encoded size in bytes (after a successful Prepare).
  size_t size() const { return size_; }
  // 2 or 4.
  size_t id_width_bytes() const { return width_; }
  // Writes the prepared record into dest[0, size()).
  void WriteTo(uint8_t* dest) const;

 private:
  RecordFields fields_;
  std::span<const uint32_t> ids_;
  size_t size_ = 0;
  size_t width_ = 2;
  size_t attributes_bytes_ = 0;
  size_t padding_ = 0;
};

// Prepare + WriteTo into *out (resized to the record; its capacity is kept,
// so a buffer reused for every record stops allocating).
Status EncodeRecord(const RecordFields& fields, std::span<const uint32_t> ids, std::string* out);

// The ids inside a parsed record: a pointer, a count and a width. The ids are
// little-endian; element access uses an unaligned-safe load (free on x86-64
// and ARM64). Inside a 4-aligned record the data is naturally aligned (the
// embedded log's read buffers guarantee that; Kafka payloads may not).
class IdSpan {
 public:
  IdSpan() = default;
  IdSpan(const uint8_t* data, size_t count, size_t width) : data_(data), count_(count), width_(width) {}

  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  size_t width_bytes() const { return width_; }
  const uint8_t* data() const { return data_; }
  uint32_t operator[](size_t i) const;
  // Widens or copies all ids into out[0, size()).
  void CopyTo(uint32_t* out) const;
  void CopyTo(int64_t* out) const;

 private:
  const uint8_t* data_ = nullptr;
  size_t count_ = 0;
  size_t width_ = 2;
};

// A parsed, validated record that borrows its bytes.
class RecordView {
 public:
  // Checks everything about the structure: version, flags, every length
  // against the buffer, the attribute block, the padding. Never reads
  // outside `bytes`. Unsupported for a version or flag this build does not
  // know; Corruption (naming the field) for a truncated or inconsistent record.
  static Result<RecordView> Parse(std::span<const uint8_t> bytes);
  static Result<RecordView> Parse(std::string_view bytes) {
    return Parse(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  }
  // Parse without keeping the view.
  static Status Validate(std::span<const uint8_t> bytes) { return Parse(bytes).status(); }

  uint8_t version() const { return version_; }
  // kMessage: source_path() is a raw topic's URI, source_line() the message's
  // partition, source_byte_offset() its offset (RecordFields).
  SourceKind source_kind() const { return source_kind_; }
  std::string_view source_path() const { return source_path_; }
  uint64_t source_line() const { return source_line_; }
  uint64_t source_byte_offset() const { return source_byte_offset_; }
  uint64_t doc_seq() const { return doc_seq_; }
  const IdSpan& ids() const { return ids_; }
  std::span<const uint8_t> bytes() const { return bytes_; }

  // The attributes in stored order.
  class AttributeIterator {
   public:
    AttributeIterator(const uint8_t* p, const uint8_t* end) : p_(p), end_(end) {}
    Attribute operator*() const;
    AttributeIterator& operator++();
    bool operator==(const AttributeIterator& o) const { return p_ == o.p_; }

   private:
    const uint8_t* p_;
    const uint8_t* end_;
  };
  struct AttributeRange {
    AttributeIterator b, e;
    AttributeIterator begin() const { return b; }
    AttributeIterator end() const { return e; }
  };
  AttributeRange attributes() const {
    return {{attributes_.data(), attributes_.data() + attributes_.size()},
            {attributes_.data() + attributes_.size(), attributes_.data() + attributes_.size()}};
  }
  // The value of the first attribute named `key`.
  std::optional<std::string_view> FindAttribute(std::string_view key) const;

 private:
  std::span<const uint8_t> bytes_;
  std::span<const uint8_t> attributes_;
  std::string_view source_path_;
  uint64_t source_line_ = 0;
  uint64_t source_byte_offset_ = 0;
  uint64_t doc_seq_ = 0;
  IdSpan ids_;
  uint8_t version_ = 0;
  SourceKind source_kind_ = SourceKind::kFile;
};

}  // namespace tokenfeed::record
