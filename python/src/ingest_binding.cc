// Python binding of tokenfeed::ingest::RunIngest (tokenfeed.ingest). The
// options cross the language boundary once: keyword arguments named as the
// command-line options (underscores for dashes; the yes/no ones by what they
// keep: dedup=False for --no-dedup), whose defaults are IngestOptions' own
// (_ingest_defaults() lists them), each converted here and checked by the
// parsers and the ingest itself. The documents come from files
// (_ingest) or from an Arrow C stream's capsule (_ingest_arrow_stream). The
// run releases the GIL; Ctrl-C stops it as SIGINT stops the command (the
// topic stays consistent; files resume).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "argument.h"
#include "option_fields.h"
#include "status_to_exception.h"
#include "tokenfeed/ingest.h"

namespace nb = nanobind;

namespace tokenfeed::python {
namespace {

using ingest::IngestOptions;

using Setter = void (*)(IngestOptions&, nb::handle, const char* name);
using Getter = nb::object (*)(const IngestOptions&);
struct OptionField {
  const char* name;
  Setter set;
  Getter get;
};

template <typename T>
T Parsed(Result<T> r) {
  return ValueOrThrow(std::move(r));
}

const char* PartitionByName(ingest::PartitionBy p) { return p == ingest::PartitionBy::kHash ? "hash" : "round-robin"; }
const char* ProgressName(ingest::ProgressMode p) {
  return p == ingest::ProgressMode::kAlways ? "always" : p == ingest::ProgressMode::kNever ? "never" : "auto";
}
const char* FsyncName(log::FsyncPolicy p) {
  return p == log::FsyncPolicy::kNone ? "none" : p == log::FsyncPolicy::kInterval ? "interval" : "each-batch";
}
const char* FormatName(text::InputFormat f) {
  switch (f) {
    case text::InputFormat::kJsonl: return "jsonl";
    case text::InputFormat::kText: return "text";
    case text::InputFormat::kParquet: return "parquet";
    case text::InputFormat::kArrow: return "arrow";
    case text::InputFormat::kAuto: break;
  }
  return "auto";
}
const char* TextModeName(text::TextMode m) {
  return m == text::TextMode::kParagraph ? "paragraph" : m == text::TextMode::kFile ? "file" : "line";
}

// One of a few spellings, as the command line takes them.
std::string Choice(nb::handle v, const char* name, std::initializer_list<const char*> choices) {
  std::string s = StringArgument(v, name);
  std::string listed;
  for (const char* c : choices) {
    if (s == c) return s;
    listed += listed.empty() ? std::string("'") + c + "'" : std::string(", '") + c + "'";
  }
  RaiseInvalidArgument(std::string(name) + " must be one of " + listed + ", not '" + s + "'");
}

// A field of IngestOptions, or of one of its parts, by its member pointers.
template <auto... Path, typename Options>
auto& FieldOf(Options& o) {
  return (o.*....*Path);
}

template <auto... Path>
void SetBool(IngestOptions& o, nb::handle v, const char* name) {
  FieldOf<Path...>(o) = BoolArgument(v, name);
}
template <auto... Path>
void SetString(IngestOptions& o, nb::handle v, const char* name) {
  FieldOf<Path...>(o) = StringArgument(v, name);
}
template <auto... Path>
void SetU64(IngestOptions& o, nb::handle v, const char* name) {
  FieldOf<Path...>(o) = UnsignedArgument(v, name, std::numeric_limits<uint64_t>::max());
}
template <auto... Path>
nb::object Get(const IngestOptions& o) {
  return nb::cast(FieldOf<Path...>(o));
}

void SetThreads(IngestOptions& o, nb::handle v, const char* name) {
  o.threads = static_cast<int>(IntegerArgument(v, name, 0, 4096));
}
void SetPartitions(IngestOptions& o, nb::handle v, const char* name) {
  o.writer.partitions = static_cast<uint32_t>(UnsignedArgument(v, name, std::numeric_limits<uint32_t>::max()));
}
void SetPartitionBy(IngestOptions& o, nb::handle v, const char* name) {
  const bool hash = Choice(v, name, {"round-robin", "hash"}) == "hash";
  o.partition_by = hash ? ingest::PartitionBy::kHash : ingest::PartitionBy::kRoundRobin;
}
void SetShard(IngestOptions& o, nb::handle v, const char* name) {
  o.shard = Parsed(text::ShardSpec::Parse(StringArgument(v, name)));
}
void SetFormat(IngestOptions& o, nb::handle v, const char* name) {
  o.reader.format = Parsed(text::ParseInputFormat(StringArgument(v, name)));
}
void SetTextMode(IngestOptions& o, nb::handle v, const char* name) {
  o.reader.text_mode = Parsed(text::ParseTextMode(StringArgument(v, name)));
}
void SetUtf8(IngestOptions& o, nb::handle v, const char* name) {
  o.reader.utf8 = Parsed(ParseUtf8Policy(StringArgument(v, name)));
}
// The reader's own check gives the range (1 byte to 4 GiB - 1).
void SetMaxDocBytes(IngestOptions& o, nb::handle v, const char* name) {
  o.reader.max_document_bytes = UnsignedArgument(v, name, std::numeric_limits<uint32_t>::max());
}
void SetBatchBytes(IngestOptions& o, nb::handle v, const char* name) {
  o.batch_bytes = static_cast<size_t>(IntegerArgument(v, name, 1, int64_t{1} << 30));
}
void SetProgress(IngestOptions& o, nb::handle v, const char* name) {
  const std::string p = Choice(v, name, {"auto", "always", "never"});
  o.progress = p == "always"  ? ingest::ProgressMode::kAlways
               : p == "never" ? ingest::ProgressMode::kNever
                              : ingest::ProgressMode::kAuto;
}
void SetFsync(IngestOptions& o, nb::handle v, const char* name) {
  const std::string f = Choice(v, name, {"each-batch", "interval", "none"});
  o.writer.log.fsync = f == "none"       ? log::FsyncPolicy::kNone
                       : f == "interval" ? log::FsyncPolicy::kInterval
                                         : log::FsyncPolicy::kEachBatch;
}

using O = IngestOptions;
const OptionField kFields[] = {
    {"threads", SetThreads, Get<&O::threads>},
    {"partitions", SetPartitions, [](const O& o) { return nb::cast(o.writer.partitions); }},
    {"partition_by", SetPartitionBy, [](const O& o) { return nb::cast(PartitionByName(o.partition_by)); }},
    {"shard", SetShard, [](const O& o) { return nb::cast(o.shard.ToString()); }},
    {"add_bos", SetBool<&O::document, &document::DocumentOptions::add_bos>,
     Get<&O::document, &document::DocumentOptions::add_bos>},
    {"add_eos", SetBool<&O::document, &document::DocumentOptions::add_eos>,
     Get<&O::document, &document::DocumentOptions::add_eos>},
    {"keep_special_tokens", SetBool<&O::document, &document::DocumentOptions::keep_special_tokens>,
     Get<&O::document, &document::DocumentOptions::keep_special_tokens>},
    {"format", SetFormat, [](const O& o) { return nb::cast(FormatName(o.reader.format)); }},
    {"text_mode", SetTextMode, [](const O& o) { return nb::cast(TextModeName(o.reader.text_mode)); }},
    {"field", SetString<&O::reader, &text::ReaderOptions::json_field>,
     Get<&O::reader, &text::ReaderOptions::json_field>},
    {"utf8", SetUtf8, [](const O& o) { return nb::cast(o.reader.utf8 == Utf8Policy::kReject ? "reject" : "replace"); }},
    {"max_doc_bytes", SetMaxDocBytes, Get<&O::reader, &text::ReaderOptions::max_document_bytes>},
    {"min_chars", SetU64<&O::clean, &text::CleanOptions::min_chars>, Get<&O::clean, &text::CleanOptions::min_chars>},
    {"max_chars", SetU64<&O::clean, &text::CleanOptions::max_chars>, Get<&O::clean, &text::CleanOptions::max_chars>},
    {"min_bytes", SetU64<&O::clean, &text::CleanOptions::min_bytes>, Get<&O::clean, &text::CleanOptions::min_bytes>},
    {"max_bytes", SetU64<&O::clean, &text::CleanOptions::max_bytes>, Get<&O::clean, &text::CleanOptions::max_bytes>},
    {"dedup", SetBool<&O::dedup>, Get<&O::dedup>},
    {"drop_controls", SetBool<&O::clean, &text::CleanOptions::drop_controls>,
     Get<&O::clean, &text::CleanOptions::drop_controls>},
    {"normalize_newlines", SetBool<&O::clean, &text::CleanOptions::normalize_newlines>,
     Get<&O::clean, &text::CleanOptions::normalize_newlines>},
    {"trim", SetBool<&O::clean, &text::CleanOptions::trim>, Get<&O::clean, &text::CleanOptions::trim>},
    {"rejects", SetString<&O::rejects_path>, Get<&O::rejects_path>},
    {"strict", SetBool<&O::strict>, Get<&O::strict>},
    {"stats_json", SetString<&O::stats_json_path>, Get<&O::stats_json_path>},
    {"batch_bytes", SetBatchBytes, Get<&O::batch_bytes>},
    {"progress", SetProgress, [](const O& o) { return nb::cast(ProgressName(o.progress)); }},
    {"fsync", SetFsync, [](const O& o) { return nb::cast(FsyncName(o.writer.log.fsync)); }},
    {"create_if_missing", SetBool<&O::writer, &topic::WriterConfig::create_if_missing>,
     Get<&O::writer, &topic::WriterConfig::create_if_missing>},
};

IngestOptions OptionsOf(const std::vector<std::string>& inputs, const std::string& to, const std::string& tokenizer,
                        const nb::dict& options) {
  IngestOptions o;
  o.inputs = inputs;
  o.to_uri = to;
  o.tokenizer_path = tokenizer;
  for (auto [key, value] : options) {
    const OptionField& field = FieldNamed(kFields, nb::str(key).c_str());
    field.set(o, value, field.name);
  }
  return o;
}

nb::dict Defaults() {
  const IngestOptions o;
  nb::dict d;
  for (const OptionField& f : kFields) d[f.name] = f.get(o);
  return d;
}

// The run on a thread of its own, so that this one can look for Ctrl-C
// (Python signal handlers run on the main thread, between bytecodes). The
// GIL is released meanwhile: the run's threads never need it, except an Arrow
// stream's callbacks, which take it themselves (pyarrow's do). Returns the
// statistics as --stats-json writes them.
template <typename RunFunction>
std::string RunWithCtrlC(RunFunction run_ingest) {
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  bool interrupted = false;
  Result<ingest::IngestStats> result = Status::Internal("the ingest did not run");
  {
    nb::gil_scoped_release release;
    std::thread run;
    try {
      run = std::thread([&] {
        Result<ingest::IngestStats> r = run_ingest(&stop);
        std::lock_guard lock(mu);
        result = std::move(r);
        done = true;
        cv.notify_all();
      });
    } catch (const std::system_error& e) {
      result = Status::ResourceExhausted(std::string("cannot start the ingest's thread: ") + e.what());
      done = true;
    }
    std::unique_lock lock(mu);
    while (!done) {
      cv.wait_for(lock, std::chrono::milliseconds(100));
      if (done || interrupted) continue;
      lock.unlock();
      {
        nb::gil_scoped_acquire acquire;
        if (PyErr_CheckSignals() != 0) {
          // The exception (KeyboardInterrupt) stays set on this thread and is
          // raised once the ingest has stopped cleanly.
          interrupted = true;
          stop.store(true);
        }
      }
      lock.lock();
    }
    lock.unlock();
    if (run.joinable()) run.join();
  }
  if (interrupted) throw nb::python_error();
  ingest::IngestStats stats = ValueOrThrow(std::move(result));
  return stats.ToJson();
}

std::string Ingest(const std::vector<std::string>& inputs, const std::string& to, const std::string& tokenizer,
                   const nb::dict& options) {
  const IngestOptions o = OptionsOf(inputs, to, tokenizer, options);
  return RunWithCtrlC([&](const std::atomic<bool>* stop) { return ingest::RunIngest(o, stop); });
}

// An Arrow C stream handed over as the PyCapsule "arrow_array_stream" that
// __arrow_c_stream__() returns (the Arrow PyCapsule interface): the ingest
// takes the stream over from the capsule (whose destructor then finds it
// released) on the run's thread, and releases it there.
std::string IngestArrowStream(nb::handle capsule, const std::string& to, const std::string& tokenizer,
                              const nb::dict& options) {
  constexpr const char* kCapsuleName = "arrow_array_stream";
  if (!PyCapsule_IsValid(capsule.ptr(), kCapsuleName)) {
    throw nb::type_error("expected the PyCapsule named 'arrow_array_stream' that __arrow_c_stream__() returns");
  }
  const IngestOptions o = OptionsOf({}, to, tokenizer, options);
  auto* stream = static_cast<ArrowArrayStream*>(PyCapsule_GetPointer(capsule.ptr(), kCapsuleName));
  return RunWithCtrlC(
      [&](const std::atomic<bool>* stop) { return ingest::RunIngestFromArrowStream(o, stream, stop); });
}

}  // namespace

void RegisterIngest(nb::module_& m) {
  m.def("_ingest_defaults", &Defaults, "The ingest options and their defaults (tokenfeed::ingest::IngestOptions).");
  m.def("_ingest", &Ingest, nb::arg("inputs"), nb::arg("to"), nb::arg("tokenizer"), nb::arg("options"));
  m.def("_ingest_arrow_stream", &IngestArrowStream, nb::arg("stream"), nb::arg("to"), nb::arg("tokenizer"),
        nb::arg("options"));
  // While the interpreter still runs, not in static destructors: Arrow's S3
  // client, when an input was in S3 (ingest::ShutdownIngestInputs).
  nb::module_::import_("atexit").attr("register")(nb::cpp_function([] { ingest::ShutdownIngestInputs(); }));
}

}  // namespace tokenfeed::python
