#include "tokenizer/pretokenize_testing.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <simdjson.h>

namespace tokenfeed::tokenizer::testing {

std::string EncodeUtf8(char32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

namespace {

constexpr char32_t kTricky[] = {
    // Every White_Space character, and look-alikes that are not \s.
    0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000, 0x2001, 0x2005, 0x200A, 0x2028,
    0x2029, 0x202F, 0x205F, 0x3000, 0x180E, 0x200B, 0x2060, 0xFEFF, 0x1C, 0x1F, 0x00, 0x7F,
    // Contractions: the apostrophe, the letters after it and their case folds.
    '\'', 's', 'S', 't', 'T', 'r', 'R', 'e', 'E', 'v', 'V', 'm', 'M', 'l', 'L', 'd', 'D', 'k', 'K',
    0x017F, 0x212A, 0x0130, 0x0131, 0x00DF, 0x1E9E, 0xFB05, 0xFB06, 0x2019, 0x02BC, 0x0149,
    // ASCII punctuation and symbols (DeepSeek's B1 class), digits, letters.
    '!', '"', '#', '$', '%', '&', '(', ')', '*', '+', ',', '-', '.', '/', ':', ';', '<', '=', '>', '?',
    '@', '[', '\\', ']', '^', '_', '`', '{', '|', '}', '~', '0', '5', '9', 'a', 'z', 'A', 'Z',
    // Letters of each category, marks of each kind.
    0x00E9, 0x00C9, 0x01C5, 0x02B0, 0x05D0, 0x0627, 0x0915, 0x0E01, 0x1C89, 0x10400, 0x1D400,
    0x0301, 0x0308, 0x093F, 0x094D, 0x0903, 0x0E31, 0x20DD, 0x1AB0, 0xE0100,
    // Numbers: Nd, Nl, No in several scripts and planes.
    0x0660, 0x0966, 0xFF10, 0x1D7CE, 0x00B2, 0x00BD, 0x2160, 0x3007, 0x2460, 0x10107,
    // CJK and kana, with the ends of DeepSeek's ranges and their neighbours.
    0x4E00, 0x4DFF, 0x9FA5, 0x9FA6, 0x9FFF, 0x3040, 0x303F, 0x309F, 0x30A0, 0x30FF, 0x3100, 0x3005,
    0x3001, 0x3002, 0xFF01, 0xFF21, 0xAC00, 0x1100, 0x20000, 0x2A6DF,
    // Symbols and punctuation outside ASCII, emoji and their joiners.
    0x00A9, 0x20AC, 0x2764, 0xFE0F, 0xFE0E, 0x1F600, 0x1F468, 0x1F3FB, 0x1F1FA, 0x20E3, 0x200D,
    0x200C, 0x00AD, 0x00BF, 0x2014, 0x201C, 0x055A, 0x2212, 0x00D7,
    // Private use, noncharacters, unassigned, the last code point.
    0xE000, 0xF0000, 0x10FFFD, 0x10FFFF, 0xFFFF, 0xFFFD, 0x0378, 0xE0001,
};

}  // namespace

std::span<const char32_t> TrickyCodePoints() { return kTricky; }

std::string RandomText(std::mt19937_64& rng, size_t length) {
  std::string s;
  std::uniform_int_distribution<int> kind(0, 99);
  std::uniform_int_distribution<size_t> tricky(0, std::size(kTricky) - 1);
  std::uniform_int_distribution<char32_t> ascii(0x20, 0x7E);
  std::uniform_int_distribution<char32_t> bmp(0x80, 0xFFFF);
  std::uniform_int_distribution<char32_t> any(0x80, 0x10FFFF);
  for (size_t i = 0; i < length; ++i) {
    const int k = kind(rng);
    char32_t cp;
    if (k < 50) {
      cp = kTricky[tricky(rng)];
    } else if (k < 80) {
      cp = ascii(rng);
    } else {
      do {
        cp = k < 92 ? bmp(rng) : any(rng);
      } while (cp >= 0xD800 && cp <= 0xDFFF);
    }
    s += EncodeUtf8(cp);
  }
  return s;
}

Result<std::vector<std::string>> BuiltinSampleDocuments() {
  const char* path = TOKENFEED_PRETOKENIZER_SAMPLE;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(std::string("cannot open the built-in sample ") + path);
  std::ostringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  std::vector<std::string> docs = {text};
  size_t from = 0;
  while (from < text.size()) {
    size_t nl = text.find('\n', from);
    if (nl == std::string::npos) nl = text.size() - 1;
    docs.push_back(text.substr(from, nl + 1 - from));
    from = nl + 1;
  }
  return docs;
}

Result<std::vector<std::string>> ReadJsonlCorpus(const std::string& dir, size_t max_bytes) {
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".jsonl") files.push_back(entry.path());
  }
  if (ec) return Status::FromErrno(ec.value(), "list corpus directory", dir);
  if (files.empty()) {
    return Status::NotFound("corpus directory " + dir + " has no .jsonl file; point TOKENFEED_CORPUS_DIR at one that does");
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> docs;
  size_t bytes = 0;
  simdjson::ondemand::parser parser;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return Status::IoError("cannot open " + file.string());
    std::string line;
    size_t line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      if (line.empty()) continue;
      simdjson::padded_string padded(line);
      std::string_view text;
      auto doc = parser.iterate(padded);
      if (doc.error() || doc["text"].get_string().get(text)) {
        return Status::Corruption(file.string() + ":" + std::to_string(line_no) +
                                  ": not a JSON object with a string field \"text\"");
      }
      docs.emplace_back(text);
      bytes += text.size();
      if (bytes >= max_bytes) return docs;
    }
  }
  return docs;
}

Result<std::vector<std::string>> CorpusOrSample(std::string* source, size_t max_bytes) {
  const char* dir = std::getenv("TOKENFEED_CORPUS_DIR");
  if (dir != nullptr && *dir != '\0') {
    if (source != nullptr) *source = std::string("corpus ") + dir;
    return ReadJsonlCorpus(dir, max_bytes);
  }
  if (source != nullptr) *source = "built-in sample " TOKENFEED_PRETOKENIZER_SAMPLE;
  return BuiltinSampleDocuments();
}

std::vector<uint32_t> CharBoundaries(std::string_view text) {
  std::vector<uint32_t> b;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<uint8_t>(text[i]) & 0xC0) != 0x80) b.push_back(static_cast<uint32_t>(i));
  }
  b.push_back(static_cast<uint32_t>(text.size()));
  return b;
}

std::string DescribeSpans(std::string_view text, const std::vector<Span>& spans) {
  std::string s;
  for (const Span& span : spans) {
    s.append("[").append(std::to_string(span.begin)).append(",").append(std::to_string(span.end)).append(")");
    if (span.begin <= span.end && span.end <= text.size()) {
      s += '"';
      for (char c : text.substr(span.begin, span.end - span.begin)) {
        if (c == '\n') {
          s += "\\n";
        } else if (c == '\r') {
          s += "\\r";
        } else if (c == '\t') {
          s += "\\t";
        } else {
          s += c;
        }
      }
      s += '"';
    }
    s += ' ';
  }
  return s;
}

}  // namespace tokenfeed::tokenizer::testing
