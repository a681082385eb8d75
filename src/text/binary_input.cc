#include "text/binary_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <memory>

#include "text/byte_source.h"
#include "text/object_store.h"
#include "text/s3_uri.h"
#include "text/table_text_column.h"

namespace tokenfeed::text {
namespace {

enum class Family : uint8_t { kDataFile, kImage, kDocument, kArchive, kCompression, kProgram };

// A binary format recognised by its magic bytes at `magic_offset`, and (with
// InputFormat::kAuto) by its extensions.
struct KnownFormat {
  std::string_view name;  // "Parquet"
  std::string_view what;  // "a Parquet file"
  Family family;
  std::string_view magic;
  size_t magic_offset = 0;
  std::array<std::string_view, 3> extensions{};
};

using namespace std::string_view_literals;

// Parquet's "PAR1" is printable ASCII, so it needs more than the first four
// bytes: see ParquetConfirmed. The others are long or contain bytes no text
// starts with.
constexpr KnownFormat kParquet{"Parquet", "a Parquet file", Family::kDataFile, "PAR1"sv, 0, {"parquet"sv}};

constexpr std::array kKnownFormats{
    kParquet,
    KnownFormat{"Arrow", "an Arrow IPC file", Family::kDataFile, "ARROW1\0\0"sv, 0, {"arrow"sv, "feather"sv}},
    KnownFormat{"Avro", "an Avro file", Family::kDataFile, "Obj\x01"sv, 0, {"avro"sv}},
    KnownFormat{"ORC", "an ORC file", Family::kDataFile, {}, 0, {"orc"sv}},
    KnownFormat{"NumPy", "a NumPy array file", Family::kDataFile, "\x93NUMPY"sv, 0, {"npy"sv}},
    KnownFormat{"HDF5", "an HDF5 file", Family::kDataFile, "\x89HDF\r\n\x1a\n"sv, 0, {"h5"sv, "hdf5"sv}},
    KnownFormat{"SQLite", "an SQLite database", Family::kDataFile, "SQLite format 3\0"sv, 0, {"sqlite"sv}},
    KnownFormat{"PNG", "a PNG image", Family::kImage, "\x89PNG\r\n\x1a\n"sv, 0, {"png"sv}},
    KnownFormat{"JPEG", "a JPEG image", Family::kImage, "\xFF\xD8\xFF"sv, 0, {"jpg"sv, "jpeg"sv}},
    KnownFormat{"GIF", "a GIF image", Family::kImage, "GIF87a"sv, 0, {"gif"sv}},
    KnownFormat{"GIF", "a GIF image", Family::kImage, "GIF89a"sv, 0, {}},
    KnownFormat{"WebP", "a WebP image", Family::kImage, "WEBP"sv, 8, {"webp"sv}},
    KnownFormat{"TIFF", "a TIFF image", Family::kImage, "II*\0"sv, 0, {"tif"sv, "tiff"sv}},
    KnownFormat{"TIFF", "a TIFF image", Family::kImage, "MM\0*"sv, 0, {}},
    KnownFormat{"PDF", "a PDF document", Family::kDocument, "%PDF-"sv, 0, {"pdf"sv}},
    KnownFormat{"ZIP", "a ZIP archive", Family::kArchive, "PK\x03\x04"sv, 0, {"zip"sv}},
    KnownFormat{"ZIP", "a ZIP archive", Family::kArchive, "PK\x05\x06"sv, 0, {}},
    KnownFormat{"tar", "a tar archive", Family::kArchive, "ustar"sv, 257, {"tar"sv}},
    KnownFormat{"7z", "a 7z archive", Family::kArchive, "7z\xBC\xAF\x27\x1C"sv, 0, {"7z"sv}},
    KnownFormat{"bzip2", "a bzip2-compressed file", Family::kCompression, "BZh"sv, 0, {"bz2"sv}},
    KnownFormat{"xz", "an xz-compressed file", Family::kCompression, "\xFD" "7zXZ\0"sv, 0, {"xz"sv}},
    KnownFormat{"LZ4", "an LZ4-compressed file", Family::kCompression, "\x04\x22\x4D\x18"sv, 0, {"lz4"sv}},
    KnownFormat{"ELF", "an ELF executable or library", Family::kProgram, "\x7F" "ELF"sv, 0, {}},
};

bool IsControl(unsigned char c) {
  // C0 controls other than TAB, LF, VT, FF, CR and ESC (terminal colour codes
  // in logs), which text files do contain.
  return c < 0x20 && c != '\t' && c != '\n' && c != '\v' && c != '\f' && c != '\r' && c != 0x1B;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

// The extension that names the format: after removing .gz / .zst, the text
// after the last dot of the last path component ("" when there is none).
std::string_view FormatExtension(std::string_view path) {
  std::string_view name = StripCompressionSuffix(path);
  size_t slash = name.rfind('/');
  if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return {};
  return name.substr(dot + 1);
}

std::string Advice(const KnownFormat& f) {
  std::string name(f.name);
  switch (f.family) {
    case Family::kDataFile:
      if (f.name == "Parquet" || f.name == "Arrow") {
        if (TableTextColumn::Available()) {
          return f.name == "Parquet" ? "Parquet files are read by name: give it the extension .parquet, or read it "
                                       "with the parquet format"
                                     : "Arrow IPC files are read by name: give it the extension .arrow, or read it "
                                       "with the arrow format";
        }
        return "Parquet support was not built in (build with -DTOKENFEED_WITH_PARQUET=ON, docs/ingest.md), or "
               "export the text as JSONL (one {\"text\": ...} object per line) and ingest that";
      }
      return name + " input is not supported by this build: export the text as JSONL (one {\"text\": ...} object "
                    "per line) and ingest that";
    case Family::kImage:
      return "an image is not text: leave it out of the inputs (name the text files, or use a glob such as "
             "DIR/**/*.jsonl)";
    case Family::kDocument:
      return name + " is not read by this build: extract its text first (for example with pdftotext) and ingest "
                    "that";
    case Family::kArchive:
      return "archives are not unpacked: extract it and give the files inside as inputs";
    case Family::kCompression:
      return "only gzip and zstd are decompressed: recompress it with gzip or zstd (or decompress it)";
    case Family::kProgram:
      return "a program is not text: leave it out of the inputs";
  }
  return {};
}

std::string AtOffset(uint64_t offset, bool decompressed) {
  return std::string(decompressed ? "uncompressed " : "") + "byte offset " + std::to_string(offset);
}

bool MagicMatches(const KnownFormat& f, std::string_view head) {
  if (f.magic.empty() || head.size() < f.magic_offset + f.magic.size()) return false;
  if (head.substr(f.magic_offset, f.magic.size()) != f.magic) return false;
  if (f.name == "bzip2") {
    // "BZh", the block size '1'..'9', then a block's or the stream end's magic.
    if (head.size() < 10 || head[3] < '1' || head[3] > '9') return false;
    std::string_view block = head.substr(4, 6);
    return block == "1AY&SY"sv || block == "\x17\x72\x45\x38\x50\x90"sv;
  }
  if (f.name == "WebP") return head.substr(0, 4) == "RIFF";
  return true;
}

// "PAR1" opens a text file as easily as a Parquet file: a Parquet file also
// ends with it, and when the end is unknown (a compressed file) the bytes
// after the magic must include a control byte, as a Parquet page header does.
bool ParquetConfirmed(const InputSample& s) {
  if (s.tail) return s.tail->size() >= 4 && s.tail->substr(s.tail->size() - 4) == "PAR1";
  std::string_view after = s.head.substr(4, 64);
  for (char c : after) {
    if (c == '\0' || IsControl(static_cast<unsigned char>(c))) return true;
  }
  return false;
}

std::optional<NotText> ByMagic(const InputSample& s) {
  for (const KnownFormat& f : kKnownFormats) {
    if (!MagicMatches(f, s.head)) continue;
    std::string evidence;
    if (f.name == "Parquet") {
      if (!ParquetConfirmed(s)) continue;
      evidence = s.tail ? "PAR1 at the start and at the end of the file" : "PAR1 at the start";
    } else if (f.magic_offset == 0) {
      evidence = "its " + std::string(f.name) + " signature at the start";
    } else {
      evidence = "its " + std::string(f.name) + " signature at " + AtOffset(f.magic_offset, false);
    }
    if (s.decompressed) evidence += " of the decompressed data";
    return NotText{std::string(f.what), std::move(evidence), Advice(f), f.magic_offset};
  }
  return std::nullopt;
}

std::optional<NotText> ByName(const InputSample& s) {
  std::string_view ext = FormatExtension(s.path);
  if (ext.empty()) return std::nullopt;
  for (const KnownFormat& f : kKnownFormats) {
    for (std::string_view known : f.extensions) {
      if (known.empty() || !EqualsIgnoreCase(ext, known)) continue;
      return NotText{"named like " + std::string(f.what), "its extension ." + std::string(ext),
                     Advice(f) + "; if it is text, read it with the text or jsonl format instead of auto", 0};
    }
  }
  return std::nullopt;
}

std::optional<NotText> ByByteOrderMark(const InputSample& s) {
  std::string_view h = s.head;
  const char* encoding = nullptr;
  const char* order = nullptr;
  if (h.substr(0, 4) == "\xFF\xFE\0\0"sv) {
    encoding = "UTF-32";
    order = "little-endian";
  } else if (h.substr(0, 4) == "\0\0\xFE\xFF"sv) {
    encoding = "UTF-32";
    order = "big-endian";
  } else if (h.substr(0, 2) == "\xFF\xFE"sv) {
    encoding = "UTF-16";
    order = "little-endian";
  } else if (h.substr(0, 2) == "\xFE\xFF"sv) {
    encoding = "UTF-16";
    order = "big-endian";
  }
  if (encoding == nullptr) return std::nullopt;
  return NotText{std::string(encoding) + " text",
                 std::string("a ") + encoding + " " + order + " byte-order mark at the start",
                 std::string("only UTF-8 is read: convert it (for example iconv -f ") + encoding + " -t UTF-8)", 0};
}

std::optional<NotText> ByContent(const InputSample& s) {
  std::string_view h = s.head;
  size_t nul = h.find('\0');
  if (nul != std::string_view::npos) {
    return NotText{"binary data", "a NUL byte at " + AtOffset(nul, s.decompressed),
                   "leave it out of the inputs (text in UTF-16 or UTF-32 has NUL bytes too: convert such text "
                   "to UTF-8)",
                   nul};
  }
  size_t controls = 0;
  size_t first = 0;
  for (size_t i = 0; i < h.size(); ++i) {
    if (IsControl(static_cast<unsigned char>(h[i]))) {
      if (controls++ == 0) first = i;
    }
  }
  // Text has next to none; a tenth of the bytes is far from any text.
  if (controls > 0 && controls * 10 > h.size()) {
    return NotText{"binary data",
                   std::to_string(controls) + " of its first " + std::to_string(h.size()) +
                       " bytes are control characters, the first at " + AtOffset(first, s.decompressed),
                   "leave it out of the inputs", first};
  }
  return std::nullopt;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// pread until `n` bytes or the end; false on an error.
bool ReadAt(int fd, uint64_t at, size_t n, std::string* out) {
  out->resize(n);
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, out->data() + got, n - got, static_cast<off_t>(at + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  out->resize(got);
  return true;
}

// The same for an object in S3: one ranged read.
bool ReadObjectAt(ObjectReader& object, uint64_t at, size_t n, std::string* out) {
  out->resize(n);
  Result<size_t> got = object.ReadAt(at, out->data(), n);
  if (!got.ok()) return false;
  out->resize(*got);
  return true;
}

bool CompressedMagic(std::string_view b) {
  if (b.size() >= 2 && b[0] == '\x1F' && b[1] == '\x8B') return true;
  if (b.size() >= 4 && b.substr(0, 4) == "\x28\xB5\x2F\xFD"sv) return true;
  return b.size() >= 4 && (static_cast<unsigned char>(b[0]) & 0xF0) == 0x50 && b.substr(1, 3) == "\x2A\x4D\x18"sv;
}

}  // namespace

std::string NotText::Message(std::string_view path) const {
  std::string m = "'";
  m.append(path).append("': ").append(what).append(" (").append(evidence).append("); ").append(advice);
  return m;
}

std::optional<NotText> ClassifyInput(const InputSample& sample) {
  if (auto v = ByMagic(sample)) return v;
  if (sample.check_name) {
    if (auto v = ByName(sample)) return v;
  }
  if (auto v = ByByteOrderMark(sample)) return v;
  return ByContent(sample);
}

std::optional<NotText> CheckTextInput(const std::string& path, bool check_name) {
  InputSample sample;
  sample.path = path;
  sample.check_name = check_name;
  std::string raw, tail, decompressed;
  if (IsS3Uri(path)) {
    // Two ranged reads: the head and the last bytes.
    auto object = OpenObject(path);
    if (!object.ok() || !ReadObjectAt(**object, 0, kBinaryCheckBytes, &raw)) return std::nullopt;
    const uint64_t size = (*object)->size();
    if (size <= raw.size()) {
      sample.tail = std::string_view(raw);
    } else if (ReadObjectAt(**object, size - 8, 8, &tail)) {
      sample.tail = std::string_view(tail);
    }
  } else {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st;
    if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    if (!ReadAt(fd.get(), 0, kBinaryCheckBytes, &raw)) return std::nullopt;
    const auto size = static_cast<uint64_t>(st.st_size);
    if (size <= raw.size()) {
      sample.tail = std::string_view(raw);
    } else if (ReadAt(fd.get(), size - 8, 8, &tail)) {
      sample.tail = std::string_view(tail);
    }
  }
  sample.head = raw;
  if (CompressedMagic(raw)) {
    // What matters is what the reader will see. A damaged stream gives what
    // decoded before the damage; the reader reports the damage itself.
    auto source = ByteSource::Open(path);
    if (!source.ok()) return std::nullopt;
    decompressed.resize(kBinaryCheckBytes);
    size_t got = 0;
    while (got < decompressed.size()) {
      Result<size_t> n = (*source)->Read(decompressed.data() + got, decompressed.size() - got);
      if (!n.ok() || *n == 0) break;
      got += *n;
    }
    decompressed.resize(got);
    sample.head = decompressed;
    sample.decompressed = true;
    sample.tail = std::nullopt;
  }
  return ClassifyInput(sample);
}

Status CheckTextInputs(const SourceSet& sources, InputFormat format) {
  std::vector<std::string> refused;
  for (const SourceFile& file : sources.files()) {
    // A Parquet or Arrow file is read as one (its reader reports what is wrong
    // with it), if the Arrow plugin loads here: an installed package without
    // pyarrow stops before anything is written, rather than reporting each
    // such file unread after the others were.
    const InputFormat as = DocumentReader::FormatForPath(file.path, format);
    if (TableTextColumn::Available() && (as == InputFormat::kParquet || as == InputFormat::kArrow)) {
      if (Status usable = TableTextColumn::Usable(); !usable.ok()) {
        return Status::Unsupported("input '" + file.path + "': " + usable.message());
      }
      continue;
    }
    if (auto not_text = CheckTextInput(file.path, format == InputFormat::kAuto)) {
      refused.push_back(not_text->Message(file.path));
    }
  }
  if (refused.empty()) return Status::OK();
  if (refused.size() == 1) return Status::InvalidArgument("input " + refused.front());
  constexpr size_t kListed = 10;
  std::string m = std::to_string(refused.size()) + " inputs are not text:";
  for (size_t i = 0; i < refused.size() && i < kListed; ++i) m += "\n  " + refused[i];
  if (refused.size() > kListed) m += "\n  and " + std::to_string(refused.size() - kListed) + " more";
  return Status::InvalidArgument(std::move(m));
}

}  // namespace tokenfeed::text
