// Python binding of tokenfeed::Loader. The options cross the language
// boundary once: keyword arguments named as the fields of LoaderOptions,
// whose defaults are the struct's own (_loader_defaults() lists them), each
// converted here (a whole number checked against the loader's own range,
// FindLoaderOptionRange, or else its field's type) and then checked as a
// whole by ValidateLoaderOptions. Batches reach Python as torch tensors that
// own the loader's buffers (no copy); waiting for a batch releases the GIL.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "argument.h"
#include "option_fields.h"
#include "status_to_exception.h"
#include "tokenfeed/loader.h"

namespace nb = nanobind;

namespace tokenfeed::python {
namespace {

template <typename Vec>
nb::object ToTensor(Vec&& v, std::vector<size_t> shape) {
  using T = typename std::decay_t<Vec>::value_type;
  auto* owned = new std::decay_t<Vec>(std::move(v));
  nb::capsule deleter(owned, [](void* p) noexcept { delete static_cast<std::decay_t<Vec>*>(p); });
  return nb::cast(nb::ndarray<nb::pytorch, T>(owned->data(), shape.size(), shape.data(), deleter));
}

// ---- the options, by name

using Setter = void (*)(LoaderOptions&, nb::handle, const char* name);
using Getter = nb::object (*)(const LoaderOptions&);
struct OptionField {
  const char* name;
  Setter set;
  Getter get;
};

// A whole-number option, checked against the loader's own range where it has
// one (FindLoaderOptionRange: seq_len=2**40 is "between 1 and 16777216"),
// else against its field's type, and worded by the loader either way.
uint64_t OptionInteger(nb::handle v, const char* name, uint64_t type_max) {
  const LoaderOptionRange range = FindLoaderOptionRange(name).value_or(LoaderOptionRange{0, type_max});
  if (std::optional<uint64_t> x = UnsignedInRange(v, name, range.lo, range.hi)) return *x;
  ThrowIfError(LoaderOptionOutOfRange(name, range, ArgumentRepr(v)));
  return 0;  // not reached: the status above is an error
}

template <auto Member>
void SetU32(LoaderOptions& o, nb::handle v, const char* name) {
  o.*Member = static_cast<uint32_t>(OptionInteger(v, name, std::numeric_limits<uint32_t>::max()));
}
template <auto Member>
void SetU64(LoaderOptions& o, nb::handle v, const char* name) {
  o.*Member = OptionInteger(v, name, std::numeric_limits<uint64_t>::max());
}
template <auto Member>
void SetBool(LoaderOptions& o, nb::handle v, const char* name) {
  o.*Member = BoolArgument(v, name);
}
template <auto Member>
void SetOptionalU32(LoaderOptions& o, nb::handle v, const char* name) {
  if (v.is_none()) {
    o.*Member = std::nullopt;
  } else {
    o.*Member = static_cast<uint32_t>(OptionInteger(v, name, std::numeric_limits<uint32_t>::max()));
  }
}
// None or 0: by the source's transport.
void SetBlockRecords(LoaderOptions& o, nb::handle v, const char* name) {
  o.block_records = v.is_none() ? 0 : static_cast<uint32_t>(OptionInteger(v, name, UINT32_MAX));
}
void SetIgnoreIndex(LoaderOptions& o, nb::handle v, const char* name) {
  o.ignore_index = IntegerArgument(v, name, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
}
// One value of a kafka_properties mapping as the Kafka client reads it: a str
// as it is, a bool as "true"/"false", an int in decimal. Anything else is
// refused naming the key only: the value may be a secret (sasl.password).
std::string KafkaPropertyValue(nb::handle value, const std::string& key, const char* name) {
  if (PyUnicode_Check(value.ptr())) return StringArgument(value, name);
  if (PyBool_Check(value.ptr())) return value.ptr() == Py_True ? "true" : "false";
  if (PyLong_Check(value.ptr())) return nb::str(value).c_str();
  throw nb::type_error((std::string(name) + "['" + key + "'] must be a str, bool or int, not " +
                        Py_TYPE(value.ptr())->tp_name + " (the value is not shown)")
                           .c_str());
}

// A list of "key=value" strings, or a mapping (any collections.abc.Mapping)
// from key to value.
void SetKafkaProperties(LoaderOptions& o, nb::handle v, const char* name) {
  nb::object mapping_type = nb::module_::import_("collections.abc").attr("Mapping");
  const int is_mapping = PyDict_Check(v.ptr()) ? 1 : PyObject_IsInstance(v.ptr(), mapping_type.ptr());
  if (is_mapping < 0) throw nb::python_error();
  if (is_mapping == 1) {
    PyObject* items = PyMapping_Items(v.ptr());
    if (items == nullptr) throw nb::python_error();
    nb::list pairs = nb::steal<nb::list>(items);
    o.kafka_properties.clear();
    for (nb::handle pair : pairs) {
      nb::handle key = nb::borrow<nb::tuple>(pair)[0], value = nb::borrow<nb::tuple>(pair)[1];
      if (!PyUnicode_Check(key.ptr())) {
        throw nb::type_error((std::string(name) + " keys must be str, not " + Py_TYPE(key.ptr())->tp_name + " " +
                              ArgumentRepr(key))
                                 .c_str());
      }
      const std::string k = StringArgument(key, name);
      if (k.empty() || k.find('=') != std::string::npos) {
        RaiseInvalidArgument(std::string(name) + ": the key '" + k +
                             "' is not a Kafka property name (it is empty or holds '='); write the name alone, "
                             "as in {\"security.protocol\": \"SSL\"}");
      }
      o.kafka_properties.push_back(k + "=" + KafkaPropertyValue(value, k, name));
    }
    return;
  }
  o.kafka_properties = StringListArgument(v, name);
  for (const std::string& p : o.kafka_properties) {
    if (p.find('=') == std::string::npos) {
      RaiseInvalidArgument(std::string(name) + ": '" + p + "' is not of the form key=value");
    }
  }
}
void SetMetricsAddress(LoaderOptions& o, nb::handle v, const char* name) {
  o.metrics_address = StringArgument(v, name);
}
template <auto Member>
nb::object Get(const LoaderOptions& o) {
  return nb::cast(o.*Member);
}

const OptionField kFields[] = {
    {"seq_len", SetU32<&LoaderOptions::seq_len>, Get<&LoaderOptions::seq_len>},
    {"batch_size", SetU32<&LoaderOptions::batch_size>, Get<&LoaderOptions::batch_size>},
    {"rank", SetU32<&LoaderOptions::rank>, Get<&LoaderOptions::rank>},
    {"world_size", SetU32<&LoaderOptions::world_size>, Get<&LoaderOptions::world_size>},
    {"seed", SetU64<&LoaderOptions::seed>, Get<&LoaderOptions::seed>},
    {"shuffle", SetBool<&LoaderOptions::shuffle>, Get<&LoaderOptions::shuffle>},
    {"block_records", SetBlockRecords, Get<&LoaderOptions::block_records>},
    {"window_blocks", SetU32<&LoaderOptions::window_blocks>, Get<&LoaderOptions::window_blocks>},
    {"epochs", SetU32<&LoaderOptions::epochs>, Get<&LoaderOptions::epochs>},
    {"shards", SetU32<&LoaderOptions::shards>, Get<&LoaderOptions::shards>},
    {"follow", SetBool<&LoaderOptions::follow>, Get<&LoaderOptions::follow>},
    {"follow_timeout_ms", SetU32<&LoaderOptions::follow_timeout_ms>, Get<&LoaderOptions::follow_timeout_ms>},
    {"pack", SetBool<&LoaderOptions::pack>, Get<&LoaderOptions::pack>},
    {"bos_id", SetOptionalU32<&LoaderOptions::bos_id>, Get<&LoaderOptions::bos_id>},
    {"eos_id", SetOptionalU32<&LoaderOptions::eos_id>, Get<&LoaderOptions::eos_id>},
    {"pad_id", SetU32<&LoaderOptions::pad_id>, Get<&LoaderOptions::pad_id>},
    {"ignore_index", SetIgnoreIndex, Get<&LoaderOptions::ignore_index>},
    {"cross_document_labels", SetBool<&LoaderOptions::cross_document_labels>,
     Get<&LoaderOptions::cross_document_labels>},
    {"int32_ids", SetBool<&LoaderOptions::int32_ids>, Get<&LoaderOptions::int32_ids>},
    {"memory_budget_bytes", SetU64<&LoaderOptions::memory_budget_bytes>, Get<&LoaderOptions::memory_budget_bytes>},
    {"prefetch_batches", SetU32<&LoaderOptions::prefetch_batches>, Get<&LoaderOptions::prefetch_batches>},
    {"kafka_properties", SetKafkaProperties, Get<&LoaderOptions::kafka_properties>},
    {"kafka_timeout_ms", SetU32<&LoaderOptions::kafka_timeout_ms>, Get<&LoaderOptions::kafka_timeout_ms>},
    {"metrics_port", SetOptionalU32<&LoaderOptions::metrics_port>, Get<&LoaderOptions::metrics_port>},
    {"metrics_address", SetMetricsAddress, Get<&LoaderOptions::metrics_address>},
};

std::vector<LoaderSource> SourcesOf(const std::vector<std::string>& uris, const std::vector<double>& weights) {
  if (uris.size() != weights.size()) RaiseInvalidArgument("one weight per source URI is needed");
  std::vector<LoaderSource> sources;
  for (size_t i = 0; i < uris.size(); ++i) sources.push_back({uris[i], weights[i]});
  return sources;
}

// LoaderOptions from keyword arguments, checked.
LoaderOptions OptionsOf(const std::vector<std::string>& uris, const std::vector<double>& weights,
                        const nb::kwargs& kwargs) {
  LoaderOptions o;
  o.sources = SourcesOf(uris, weights);
  for (auto [key, value] : kwargs) {
    const OptionField& field = FieldNamed(kFields, nb::str(key).c_str());
    field.set(o, value, field.name);
  }
  ThrowIfError(ValidateLoaderOptions(o));
  return o;
}

nb::dict Defaults() {
  const LoaderOptions o;
  nb::dict d;
  for (const OptionField& f : kFields) d[f.name] = f.get(o);
  return d;
}

class PyLoader {
 public:
  explicit PyLoader(std::unique_ptr<Loader> l, std::vector<std::string> uris)
      : l_(std::move(l)), uris_(std::move(uris)) {}

  nb::object Next() {
    Result<std::optional<Batch>> r = Status::Internal("no batch");
    {
      nb::gil_scoped_release release;
      r = l_->Next();
    }
    std::optional<Batch> b = ValueOrThrow(std::move(r));
    if (!b) return nb::none();
    const size_t B = b->batch_size, T = b->seq_len;
    nb::dict d;
    // One tensor [3, B, T] for input_ids, labels and position_ids: the
    // Python layer takes views of it (one hand-over instead of three).
    if (b->int32) {
      d["_token_arrays"] = ToTensor(std::move(b->tokens32), {3, B, T});
    } else {
      d["_token_arrays"] = ToTensor(std::move(b->tokens64), {3, B, T});
    }
    d["document_ids"] = ToTensor(std::move(b->document_ids), {B, T});
    const size_t n = b->cu_seqlens.size();
    d["cu_seqlens"] = ToTensor(std::move(b->cu_seqlens), {n});
    d["max_seqlen"] = b->max_seqlen;
    if (!b->attention_mask.empty()) d["attention_mask"] = ToTensor(std::move(b->attention_mask), {B, T});
    // torch reads no unsigned 32-bit tensors: the row sources travel as int32.
    std::vector<int32_t> source(b->source_of_row.begin(), b->source_of_row.end());
    const size_t rows = source.size();
    d["source"] = ToTensor(std::move(source), {rows});
    d["step"] = b->step;
    d["tokens"] = b->tokens;
    return d;
  }

  std::string State() const { return l_->State(); }
  void LoadState(const std::string& s) {
    Status st;
    {
      nb::gil_scoped_release release;
      st = l_->LoadState(s);
    }
    ThrowIfError(st);
  }
  void StartNextRound() {
    Status st;
    {
      nb::gil_scoped_release release;
      st = l_->StartNextRound();
    }
    ThrowIfError(st);
  }
  std::string Snapshot() const { return l_->Snapshot(); }
  nb::object MetricsPort() const {
    const uint16_t port = l_->MetricsPort();
    return port == 0 ? nb::none() : nb::cast(port);
  }

  nb::dict Metrics() const {
    LoaderMetrics m = l_->Metrics();
    nb::dict d;
    d["batches"] = m.batches;
    d["wait_seconds_total"] = m.wait_seconds_total;
    d["last_wait_seconds"] = m.last_wait_seconds;
    d["tokens_per_second"] = m.tokens_per_second;
    d["ready_batches"] = m.ready_batches;
    d["ready_capacity"] = m.ready_capacity;
    d["buffered_bytes"] = m.buffered_bytes;
    d["records_read"] = m.records_read;
    d["bytes_read"] = m.bytes_read;
    d["append_wait_seconds_total"] = m.append_wait_seconds_total;
    d["waiting_for_appends"] = m.waiting_for_appends;
    d["freshness_p50_seconds"] = m.freshness_p50_seconds;
    d["freshness_p99_seconds"] = m.freshness_p99_seconds;
    nb::list lag;
    for (const LoaderMetrics::PartitionLag& p : m.partition_lag) {
      nb::dict e;
      e["uri"] = p.uri;
      e["partition"] = p.partition;
      e["records_behind"] = p.records_behind;
      e["freshness_seconds"] = p.freshness_seconds < 0 ? nb::none() : nb::cast(p.freshness_seconds);
      lag.append(e);
    }
    d["partition_lag"] = lag;
    d["epochs_completed"] = m.epochs_completed;
    d["tokens"] = m.tokens;
    nb::list buckets;
    for (size_t i = 0; i < m.wait_buckets.size(); ++i) {
      buckets.append(nb::make_tuple(LoaderMetrics::kWaitBucketBounds[i], m.wait_buckets[i]));
    }
    d["wait_seconds_buckets"] = buckets;
    d["wait_count"] = m.wait_count;
    nb::list consumed;
    for (const LoaderMetrics::SourceConsumption& c : m.consumed) {
      nb::dict e;
      e["uri"] = c.source < uris_.size() ? uris_[c.source] : std::to_string(c.source);
      e["source"] = c.source;
      e["epoch"] = c.epoch;
      e["tokens"] = c.tokens;
      e["documents"] = c.documents;
      consumed.append(e);
    }
    d["consumed"] = consumed;
    d["consumed_from_sample"] = m.consumed_from_sample;
    if (m.ended_source && *m.ended_source < uris_.size()) {
      d["ended_source"] = uris_[*m.ended_source];
    } else {
      d["ended_source"] = nb::none();
    }
    return d;
  }

 private:
  std::unique_ptr<Loader> l_;
  std::vector<std::string> uris_;
};

PyLoader CreateLoader(const std::vector<std::string>& uris, const std::vector<double>& weights,
                      const std::string& snapshot, const nb::kwargs& kwargs) {
  LoaderOptions o = OptionsOf(uris, weights, kwargs);
  o.snapshot_json = snapshot;
  Result<std::unique_ptr<Loader>> r = Status::Internal("not created");
  {
    nb::gil_scoped_release release;
    r = Loader::Create(o);
  }
  return PyLoader(ValueOrThrow(std::move(r)), uris);
}

std::string MergeStates(const std::vector<std::string>& states) {
  return ValueOrThrow(MergeLoaderStates(states));
}

std::string TakeSnapshotOf(const std::vector<std::string>& uris, const nb::kwargs& kwargs) {
  LoaderOptions o = OptionsOf(uris, std::vector<double>(uris.size(), 1.0), kwargs);
  Result<std::string> r = Status::Internal("no snapshot");
  {
    nb::gil_scoped_release release;
    r = TakeSnapshot(o.sources, o.kafka_properties);
  }
  return ValueOrThrow(std::move(r));
}

}  // namespace

void RegisterLoader(nb::module_& m) {
  nb::class_<PyLoader>(m, "_Loader")
      .def("next", &PyLoader::Next)
      .def("state", &PyLoader::State)
      .def("load_state", &PyLoader::LoadState)
      .def("start_next_round", &PyLoader::StartNextRound)
      .def("snapshot", &PyLoader::Snapshot)
      .def("metrics", &PyLoader::Metrics)
      .def("metrics_port", &PyLoader::MetricsPort);
  m.def("_loader_defaults", &Defaults, "The loader options and their defaults (tokenfeed::LoaderOptions).");
  m.def("_create_loader", &CreateLoader, nb::arg("uris"), nb::arg("weights"), nb::arg("snapshot"), nb::arg("options"));
  m.def("_take_snapshot", &TakeSnapshotOf, nb::arg("uris"), nb::arg("options"));
  m.def("_merge_states", &MergeStates, nb::arg("states"),
        "The states of all ranks of a sharded run, saved at one step, as one (tokenfeed::MergeLoaderStates).");
}

}  // namespace tokenfeed::python
