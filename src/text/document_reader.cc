#include "text/document_reader.h"

#include <algorithm>
#include <cctype>

#include "base/json_writer.h"
#include "base/utf8.h"
#include "text/json_text_field.h"
#include "text/line_window.h"
#include "text/table_text_column.h"

namespace tokenfeed::text {
namespace {

// A next_offset that means "this document is the last of its file".
constexpr uint64_t kEndsTheFile = ~uint64_t{0};

bool IsBlank(std::string_view s) {
  for (char c : s) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\v' && c != '\f') return false;
  }
  return true;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

}  // namespace

Result<InputFormat> ParseInputFormat(std::string_view name) {
  if (name == "auto") return InputFormat::kAuto;
  if (name == "jsonl") return InputFormat::kJsonl;
  if (name == "text") return InputFormat::kText;
  if (name == "parquet") return InputFormat::kParquet;
  if (name == "arrow") return InputFormat::kArrow;
  return Status::InvalidArgument("unknown input format '" + std::string(name) +
                                 "'; use auto, jsonl, text, parquet or arrow");
}

Result<TextMode> ParseTextMode(std::string_view name) {
  if (name == "line") return TextMode::kLine;
  if (name == "paragraph") return TextMode::kParagraph;
  if (name == "file") return TextMode::kFile;
  return Status::InvalidArgument("unknown text mode '" + std::string(name) + "'; use line, paragraph or file");
}


void AppendRejectJsonLine(const Reject& reject, std::string* out) {
  JsonWriter j(out);
  j.BeginObject();
  j.Key("file").String(reject.path);
  j.Key("line").Uint(reject.line);
  j.Key("offset").Uint(reject.byte_offset);
  j.Key("reason").String(DropReasonName(reject.reason));
  j.Key("message").String(reject.message);
  j.EndObject();
  out->push_back('\n');
}

class DocumentReader::FileState {
 public:
  std::unique_ptr<ByteSource> source;
  std::unique_ptr<LineWindow> window;
  std::unique_ptr<TableTextColumn> table;  // a Parquet or Arrow file: no source or window
  InputFormat format = InputFormat::kText;
  uint64_t ordinal = 0;
  uint64_t documents = 0;
  uint64_t rejects = 0;
  uint64_t last_line = 0;
  bool resumed = false;  // started at a ResumePoint inside this file
};

InputFormat DocumentReader::FormatForPath(std::string_view path, InputFormat option) {
  if (option != InputFormat::kAuto) return option;
  std::string_view name = StripCompressionSuffix(path);
  size_t slash = name.rfind('/');
  if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return InputFormat::kText;
  std::string_view ext = name.substr(dot + 1);
  if (EqualsIgnoreCase(ext, "jsonl") || EqualsIgnoreCase(ext, "json")) return InputFormat::kJsonl;
  // A compressed .parquet.gz is not read as Parquet (it needs random access);
  // the ingest refuses it as binary instead. The same for Arrow files.
  const bool compressed = StripCompressionSuffix(path).size() != path.size();
  if (EqualsIgnoreCase(ext, "parquet") && !compressed) return InputFormat::kParquet;
  if ((EqualsIgnoreCase(ext, "arrow") || EqualsIgnoreCase(ext, "feather")) && !compressed) {
    return InputFormat::kArrow;
  }
  return InputFormat::kText;
}

Status DocumentReader::CheckColumnOptions(const ReaderOptions& options) {
  // simdjson parses at most 4 GiB - 1 at once; larger limits would only fail later.
  constexpr size_t kMaxDocumentLimit = (size_t{4} << 30) - 1;
  if (options.max_document_bytes == 0 || options.max_document_bytes > kMaxDocumentLimit) {
    return Status::InvalidArgument("the maximum document size must be between 1 byte and 4 GiB - 1, not " +
                                   std::to_string(options.max_document_bytes));
  }
  if (options.read_block_bytes == 0 || options.read_block_bytes > (size_t{1} << 30)) {
    return Status::InvalidArgument("the read block size must be between 1 byte and 1 GiB, not " +
                                   std::to_string(options.read_block_bytes));
  }
  return Status::OK();
}

Result<std::unique_ptr<DocumentReader>> DocumentReader::Open(SourceSet sources, ReaderOptions options,
                                                             ResumePoint start) {
  TF_RETURN_IF_ERROR(CheckColumnOptions(options));
  const std::string& field = options.json_field;
  if (field.empty() || field.front() == '.' || field.back() == '.' || field.find("..") != std::string::npos) {
    return Status::InvalidArgument("JSON field '" + field +
                                   "' is not a key or a dotted path of keys (for example text or meta.body)");
  }
  if (start.file_index > sources.files().size()) {
    return Status::InvalidArgument("resume point names file " + std::to_string(start.file_index) +
                                   " but this shard has only " + std::to_string(sources.files().size()) +
                                   " files; the inputs or --shard changed since it was recorded");
  }
  if (!start.path.empty()) {
    if (start.file_index == sources.files().size() || sources.files()[start.file_index].path != start.path) {
      return Status::InvalidArgument("resume point names '" + start.path + "' as file " +
                                     std::to_string(start.file_index) +
                                     " but the inputs list another file there; give the same inputs and --shard "
                                     "as the run that recorded it");
    }
  }
  if (start.line == 0) return Status::InvalidArgument("resume point has line 0; lines are numbered from 1");
  if ((options.format == InputFormat::kParquet || options.format == InputFormat::kArrow) &&
      !TableTextColumn::Available()) {
    return Status::Unsupported("the parquet or arrow format was asked for, but Parquet support was not built in "
                               "(build with -DTOKENFEED_WITH_PARQUET=ON, docs/ingest.md)");
  }
  return std::unique_ptr<DocumentReader>(new DocumentReader(std::move(sources), std::move(options), std::move(start)));
}

Result<std::unique_ptr<DocumentReader>> DocumentReader::OpenColumn(std::unique_ptr<TableTextColumn> column,
                                                                   std::string name, ReaderOptions options) {
  if (column == nullptr) return Status::InvalidArgument("no table column to read");
  // The column was chosen when it was opened (by its own naming rules, not
  // the JSON field's); the format and text mode do not apply.
  TF_RETURN_IF_ERROR(CheckColumnOptions(options));
  std::unique_ptr<DocumentReader> reader(
      new DocumentReader(SourceSet::FromNames({std::move(name)}), std::move(options), ResumePoint{}));
  reader->open_column_ = std::move(column);
  return reader;
}

DocumentReader::DocumentReader(SourceSet sources, ReaderOptions options, ResumePoint start)
    : sources_(std::move(sources)),
      options_(std::move(options)),
      start_(std::move(start)),
      file_index_(start_.file_index),
      sequence_(start_.sequence),
      json_(std::make_unique<JsonTextField>(options_.json_field)) {}

DocumentReader::~DocumentReader() = default;

size_t DocumentReader::buffer_bytes() const { return file_ && file_->window ? file_->window->allocated_bytes() : 0; }

size_t DocumentReader::max_buffer_bytes() const {
  return options_.max_document_bytes + std::max<size_t>(options_.read_block_bytes, 1) + LineWindow::kPadding;
}

Status DocumentReader::OpenFile() {
  if (open_column_) return OpenTableFile(InputFormat::kArrow);
  const SourceFile& file = sources_.files()[file_index_];
  const InputFormat format = FormatForPath(file.path, options_.format);
  if (format == InputFormat::kParquet || format == InputFormat::kArrow) return OpenTableFile(format);
  auto state = std::make_unique<FileState>();
  TF_ASSIGN_OR_RETURN(state->source, ByteSource::Open(file.path));
  state->window =
      std::make_unique<LineWindow>(state->source.get(), options_.max_document_bytes, options_.read_block_bytes);
  state->format = FormatForPath(file.path, options_.format);
  doc_ = OpenDocument{};  // a paragraph cut short by an error in the last file is gone
  if (!start_applied_ && file_index_ == start_.file_index) {
    start_applied_ = true;
    if (start_.byte_offset != 0 || start_.line != 1) {
      TF_RETURN_IF_ERROR(state->window->StartAt(start_.byte_offset, start_.line));
    }
    state->ordinal = start_.ordinal;
    state->last_line = start_.line - 1;
    state->resumed = start_.byte_offset != 0;
  }
  file_ = std::move(state);
  return Status::OK();
}

// A Parquet or Arrow file's documents are its rows: line is the 1-based row
// number in the file and the byte offset its 0-based row index (line - 1), so
// that a ResumePoint names a row (the row group follows from the metadata).
Status DocumentReader::OpenTableFile(InputFormat format) {
  const SourceFile& file = sources_.files()[file_index_];
  auto state = std::make_unique<FileState>();
  state->format = format;
  doc_ = OpenDocument{};
  uint64_t first_row = 0;
  if (!start_applied_ && file_index_ == start_.file_index) {
    start_applied_ = true;
    if (start_.byte_offset + 1 != start_.line) {
      return Status::InvalidArgument("'" + file.path + "': resume point at line " + std::to_string(start_.line) +
                                     ", byte offset " + std::to_string(start_.byte_offset) +
                                     " is not a table row (row index = line - 1); the file changed type since "
                                     "it was recorded");
    }
    first_row = start_.byte_offset;
    state->ordinal = start_.ordinal;
    state->last_line = start_.line - 1;
    state->resumed = first_row != 0;
  }
  if (open_column_) {
    state->table = std::move(open_column_);
    file_ = std::move(state);
    return Status::OK();
  }
  const TableFormat table = format == InputFormat::kParquet ? TableFormat::kParquet : TableFormat::kArrowIpc;
  TF_ASSIGN_OR_RETURN(state->table, TableTextColumn::Open(file.path, table, options_.json_field, first_row));
  file_ = std::move(state);
  return Status::OK();
}

Result<ReadEvent> DocumentReader::NextTableDocument() {
  FileState& f = *file_;
  TableTextColumn::Row row;
  TF_ASSIGN_OR_RETURN(bool got, f.table->Next(&row));
  if (!got) return FinishFile();
  const uint64_t line = row.index + 1;
  f.last_line = line;
  if (!row.text) {
    return RejectHere(DropReason::kMissingField,
                      "row " + std::to_string(row.index) + " (row group " + std::to_string(row.row_group) +
                          ") has no text: column '" + options_.json_field + "' is null",
                      line, row.index);
  }
  if (row.text->size() > options_.max_document_bytes) {
    return RejectHere(DropReason::kTooLong, TooLongMessage(row.text->size()), line, row.index);
  }
  return Deliver(*row.text, line, row.index, row.index + 1, line + 1);
}

Result<ReadEvent> DocumentReader::Next() {
  if (ended_) return ReadEvent::kEnd;
  if (!file_) {
    if (file_index_ >= sources_.files().size()) {
      ended_ = true;
      return ReadEvent::kEnd;
    }
    Status opened = OpenFile();
    if (!opened.ok()) {
      ++file_index_;
      return opened;
    }
  }
  Result<ReadEvent> event = file_->table ? NextTableDocument()
                             : file_->format == InputFormat::kJsonl || options_.text_mode == TextMode::kLine
                                 ? NextLineDocument()
                                 : NextParagraphOrFile();
  if (!event.ok()) {
    const FileState& f = *file_;
    Status s = event.status();
    std::string m = s.message() + " [" + std::to_string(f.documents) + " documents of this file were delivered" +
                    (f.resumed ? " since the resume point" : "");
    if (f.last_line > 0) {
      m += f.table ? ", reading stopped after row " + std::to_string(f.last_line - 1)
                   : ", reading stopped in line " + std::to_string(f.last_line + 1);
    }
    m += "]";
    file_.reset();
    ++file_index_;
    return Status(s.code(), std::move(m));
  }
  return event;
}

ReadEvent DocumentReader::FinishFile() {
  const SourceFile& file = sources_.files()[file_index_];
  file_end_ = FileEnd{};
  file_end_.path = file.path;
  file_end_.file_index = file_index_;
  file_end_.compression = file_->source ? file_->source->compression() : Compression::kNone;
  file_end_.documents = file_->documents;
  file_end_.rejects = file_->rejects;
  file_end_.lines = file_->last_line;
  file_end_.bytes = file_->source ? file_->source->offset() : file_->table->file_bytes();
  file_.reset();
  ++file_index_;
  return ReadEvent::kFileEnd;
}

ReadEvent DocumentReader::RejectHere(DropReason reason, std::string message, uint64_t line, uint64_t offset) {
  reject_ = Reject{};
  reject_.reason = reason;
  reject_.message = std::move(message);
  reject_.path = sources_.files()[file_index_].path;
  reject_.file_index = file_index_;
  reject_.line = line;
  reject_.byte_offset = offset;
  ++file_->rejects;
  return ReadEvent::kReject;
}

ReadEvent DocumentReader::Emit(std::string_view text, uint32_t repairs, uint64_t line, uint64_t offset,
                               uint64_t next_offset, uint64_t next_line) {
  document_.text = text;
  document_.path = sources_.files()[file_index_].path;
  document_.position = DocumentPosition{file_index_, line, offset, file_->ordinal};
  document_.sequence = sequence_++;
  document_.utf8_repairs = repairs;
  if (next_offset == kEndsTheFile) {
    // Nothing can follow in this file, and a position at its end would not
    // be after an LF (the check StartAt makes): continue with the next file.
    document_.next = ResumePoint{file_index_ + 1, 0, 1, 0, sequence_, {}};
  } else {
    document_.next = ResumePoint{file_index_, next_offset, next_line, file_->ordinal + 1, sequence_, {}};
  }
  ++file_->ordinal;
  ++file_->documents;
  return ReadEvent::kDocument;
}

std::string DocumentReader::TooLongMessage(uint64_t bytes) const {
  return "document of " + std::to_string(bytes) +
         " bytes is over the maximum document size of " + std::to_string(options_.max_document_bytes) +
         " bytes; it was skipped (raise the maximum to keep such documents)";
}

ReadEvent DocumentReader::Deliver(std::string_view raw, uint64_t line, uint64_t offset, uint64_t next_offset,
                                  uint64_t next_line) {
  size_t bad = FindInvalidUtf8(raw);
  if (bad == std::string_view::npos) return Emit(raw, 0, line, offset, next_offset, next_line);
  if (options_.utf8 == Utf8Policy::kReject) {
    if (file_->table) {
      return RejectHere(DropReason::kInvalidUtf8,
                        "invalid UTF-8 in row " + std::to_string(offset) + " at byte " + std::to_string(bad) +
                            " of its text",
                        line, offset);
    }
    return RejectHere(DropReason::kInvalidUtf8,
                      "invalid UTF-8 at byte offset " + std::to_string(offset + bad) + " (byte " +
                          std::to_string(bad) + " of the document)",
                      line, offset + bad);
  }
  repaired_.clear();
  auto repairs = static_cast<uint32_t>(AppendRepairedUtf8(raw, &repaired_));
  return Emit(repaired_, repairs, line, offset, next_offset, next_line);
}

Result<ReadEvent> DocumentReader::NextLineDocument() {
  const bool jsonl = file_->format == InputFormat::kJsonl;
  Line line;
  for (;;) {
    TF_ASSIGN_OR_RETURN(bool got, file_->window->Next(&line));
    if (!got) return FinishFile();
    file_->last_line = line.number;
    if (line.too_long) return RejectHere(DropReason::kTooLong, TooLongMessage(line.length), line.number, line.offset);
    if (IsBlank(line.text)) continue;
    const uint64_t next_offset = line.ends_with_newline ? line.end_offset() : kEndsTheFile;
    if (!jsonl) return Deliver(line.text, line.number, line.offset, next_offset, line.number + 1);

    // The line lies in the window with LineWindow::kPadding bytes after it,
    // which is what the parser needs; a repaired copy gets its own padding.
    std::string_view json = line.text;
    uint32_t repairs = 0;
    size_t bad = FindInvalidUtf8(line.text);
    if (bad != std::string_view::npos) {
      if (options_.utf8 == Utf8Policy::kReject) {
        return RejectHere(DropReason::kInvalidUtf8,
                          "invalid UTF-8 at byte offset " + std::to_string(line.offset + bad) + " (byte " +
                              std::to_string(bad) + " of line " + std::to_string(line.number) + ")",
                          line.number, line.offset + bad);
      }
      // Outside strings a bad byte is a JSON error anyway, so repairing the
      // whole line first and parsing after gives the same result as repairing
      // inside strings only.
      padded_.clear();
      repairs = static_cast<uint32_t>(AppendRepairedUtf8(line.text, &padded_));
      size_t size = padded_.size();
      padded_.append(LineWindow::kPadding, ' ');
      json = std::string_view(padded_.data(), size);
    }
    JsonTextField::Outcome outcome = json_->Extract(json);
    if (!outcome.ok) return RejectHere(outcome.reason, std::move(outcome.message), line.number, line.offset);
    return Emit(outcome.text, repairs, line.number, line.offset, next_offset, line.number + 1);
  }
}

Result<ReadEvent> DocumentReader::NextParagraphOrFile() {
  const bool whole_file = options_.text_mode == TextMode::kFile;
  FileState& f = *file_;
  Line line;
  for (;;) {
    TF_ASSIGN_OR_RETURN(bool got, f.window->Next(&line));
    if (got) f.last_line = line.number;
    const bool blank = got && !line.too_long && IsBlank(line.text);
    if (got && !blank) {
      if (!doc_.open) {
        doc_ = OpenDocument{};
        doc_.open = true;
        doc_.offset = line.offset;
        doc_.line = line.number;
        f.window->Pin(line.offset);
      }
      if (line.too_long) {
        doc_.too_long = true;
        doc_.end = line.offset + line.length;
      } else {
        doc_.end = line.offset + line.text.size();
      }
      doc_.next_offset = line.end_offset();
      doc_.next_line = line.number + 1;
      continue;
    }
    if (got && !doc_.open) continue;  // blank lines between documents
    if (got && whole_file) continue;  // blank lines inside the file's one document
    if (!got && !doc_.open) return FinishFile();

    // A blank line or the end of the file closes the open document.
    doc_.open = false;
    const bool lost = f.window->pin_lost();
    uint64_t next_offset = got ? line.end_offset() : kEndsTheFile;
    uint64_t next_line = got ? line.number + 1 : doc_.next_line;
    if (doc_.too_long || lost || doc_.end - doc_.offset > options_.max_document_bytes) {
      f.window->Unpin();
      return RejectHere(DropReason::kTooLong, TooLongMessage(doc_.end - doc_.offset),
                        doc_.line, doc_.offset);
    }
    std::string_view text = f.window->Span(doc_.offset, doc_.end);
    f.window->Unpin();  // the span stays readable until the next call to Next
    return Deliver(text, doc_.line, doc_.offset, next_offset, next_line);
  }
}

}  // namespace tokenfeed::text
