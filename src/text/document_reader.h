// DocumentReader: the files of a SourceSet as documents, in order, each with
// its position (file, line, uncompressed byte offset, ordinal, sequence) and
// the ResumePoint just after it. A Parquet or Arrow file gives one document per row:
// its "line" is the 1-based row number and its "byte offset" the 0-based row
// index (TableTextColumn reads it). Per-document problems are Reject events and
// reading goes on; whole-file problems are an error Status naming the file.
// It does not clean, deduplicate or tokenize. Views are valid until the next
// Next; not thread-safe: one thread reads, copies go to workers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "text/byte_source.h"
#include "text/source_set.h"
#include "tokenfeed/drop_reason.h"
#include "tokenfeed/reader_options.h"
#include "tokenfeed/status.h"
#include "tokenfeed/utf8_policy.h"

namespace tokenfeed::text {

class JsonTextField;
class TableTextColumn;

// Where reading starts. The default is the beginning of the first file. To
// resume, pass the `next` of the last document already consumed: reading
// continues with the document after it (rejects after it are reported again).
// After a file's last document `next` may already name the next file (its
// start), or file_index == files().size() when no file is left.
struct ResumePoint {
  uint32_t file_index = 0;   // index into SourceSet::files() (== size: nothing left)
  uint64_t byte_offset = 0;  // uncompressed offset of a line start in that file (Parquet: row index)
  uint64_t line = 1;         // the number of that line (Parquet: row index + 1)
  uint64_t ordinal = 0;      // ordinal in that file of the next document
  uint64_t sequence = 0;     // sequence number of the next document
  // When not empty, must equal files()[file_index].path: a changed file list
  // is caught instead of resuming in the wrong file. Leave it empty when
  // file_index == files().size().
  std::string path;
};

struct DocumentPosition {
  uint32_t file_index = 0;
  uint64_t line = 0;         // 1-based line of the document's first line
  uint64_t byte_offset = 0;  // uncompressed offset of the document's first byte (its line's start)
  uint64_t ordinal = 0;      // 0-based, among the documents (not rejects) of this file
};

struct Document {
  std::string_view text;  // valid UTF-8 (after the Utf8Policy); not yet cleaned
  std::string_view path;
  DocumentPosition position;
  uint64_t sequence = 0;        // 0-based count of documents this reader delivered before, plus the start's
  uint32_t utf8_repairs = 0;    // invalid subparts replaced by U+FFFD
  ResumePoint next;             // resume here to continue after this document (path left empty)
};

struct Reject {
  DropReason reason{};
  std::string message;    // what is wrong, naming the field or the byte offset
  std::string_view path;
  uint32_t file_index = 0;
  uint64_t line = 0;
  uint64_t byte_offset = 0;  // the document's start, or for invalid_utf8 the first bad byte
};

// Appends one line of the --rejects file, with its LF:
// {"file":"...","line":N,"offset":N,"reason":"bad_json","message":"..."}
void AppendRejectJsonLine(const Reject& reject, std::string* out);

struct FileEnd {
  std::string_view path;
  uint32_t file_index = 0;
  Compression compression = Compression::kNone;
  uint64_t documents = 0;   // delivered from this file by this reader
  uint64_t rejects = 0;
  uint64_t lines = 0;       // the number of the last line read
  uint64_t bytes = 0;       // uncompressed size of the file
};

enum class ReadEvent : uint8_t {
  kDocument,  // document() is valid
  kReject,    // reject() is valid
  kFileEnd,   // file_end() is valid: that file was read completely
  kEnd,       // every file of the set is done
};

class DocumentReader {
 public:
  // InvalidArgument for bad options or a ResumePoint outside the set. Files
  // are opened lazily, so problems with them come from Next.
  static Result<std::unique_ptr<DocumentReader>> Open(SourceSet sources, ReaderOptions options,
                                                      ResumePoint start = {});
  // A reader of one table column that is already open (an Arrow C stream:
  // ArrowStreamTextColumn) as its one source, named `name` in positions and
  // messages. It starts at the column's start: a stream cannot be resumed.
  static Result<std::unique_ptr<DocumentReader>> OpenColumn(std::unique_ptr<TableTextColumn> column,
                                                            std::string name, ReaderOptions options);
  // The checks OpenColumn makes of `options` (the sizes; not the JSON field
  // or the format, which do not apply to a column), for a caller that must
  // refuse bad options before it does anything else.
  static Status CheckColumnOptions(const ReaderOptions& options);
  ~DocumentReader();
  DocumentReader(const DocumentReader&) = delete;
  DocumentReader& operator=(const DocumentReader&) = delete;

  // The next event. An error names the file and says how far it got (a
  // truncated archive: the uncompressed offset reached); that file is then
  // finished and the next call goes on with the file after it, so a caller
  // may log the error and continue. Once kEnd is returned it stays kEnd.
  Result<ReadEvent> Next();

  const Document& document() const { return document_; }
  const Reject& reject() const { return reject_; }
  const FileEnd& file_end() const { return file_end_; }
  const SourceSet& sources() const { return sources_; }
  const ReaderOptions& options() const { return options_; }

  // The format a file is read as, after kAuto is resolved from its name.
  static InputFormat FormatForPath(std::string_view path, InputFormat option);

  // The read buffer of the file being read, now and at most (for tests of
  // the memory bound); 0 between files.
  size_t buffer_bytes() const;
  size_t max_buffer_bytes() const;

 private:
  class FileState;
  // The paragraph or whole-file document being gathered.
  struct OpenDocument {
    bool open = false;
    bool too_long = false;
    uint64_t offset = 0;  // first byte
    uint64_t line = 0;    // first line
    uint64_t end = 0;     // just past the last byte of its last non-blank line (CR excluded)
    uint64_t next_offset = 0;
    uint64_t next_line = 0;
  };

  DocumentReader(SourceSet sources, ReaderOptions options, ResumePoint start);
  Status OpenFile();
  Status OpenTableFile(InputFormat format);
  Result<ReadEvent> NextTableDocument();
  Result<ReadEvent> NextLineDocument();
  Result<ReadEvent> NextParagraphOrFile();
  ReadEvent FinishFile();
  // Applies the UTF-8 policy to `raw`, then emits it as a document or rejects
  // it as invalid_utf8. next_offset / next_line: the ResumePoint after it.
  ReadEvent Deliver(std::string_view raw, uint64_t line, uint64_t offset, uint64_t next_offset, uint64_t next_line);
  ReadEvent Emit(std::string_view text, uint32_t repairs, uint64_t line, uint64_t offset, uint64_t next_offset,
                 uint64_t next_line);
  ReadEvent RejectHere(DropReason reason, std::string message, uint64_t line, uint64_t offset);
  std::string TooLongMessage(uint64_t bytes) const;

  SourceSet sources_;
  ReaderOptions options_;
  ResumePoint start_;
  bool start_applied_ = false;
  uint32_t file_index_;
  uint64_t sequence_;
  std::unique_ptr<FileState> file_;
  std::unique_ptr<JsonTextField> json_;
  std::unique_ptr<TableTextColumn> open_column_;  // OpenColumn's, until it is read as file 0
  OpenDocument doc_;
  std::string repaired_;  // a document after U+FFFD repair
  std::string padded_;    // a repaired JSONL line with the parser's padding
  bool ended_ = false;

  Document document_;
  Reject reject_;
  FileEnd file_end_;
};

}  // namespace tokenfeed::text
