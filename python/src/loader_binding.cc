// Python binding of tokenfeed::Loader. Batches reach Python as torch tensors
// that own the loader's buffers (no copy); waiting for a batch releases the GIL.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <vector>

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

class PyLoader {
 public:
  explicit PyLoader(std::unique_ptr<Loader> l) : l_(std::move(l)) {}

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
  void LoadState(const std::string& s) { ThrowIfError(l_->LoadState(s)); }
  std::string Snapshot() const { return l_->Snapshot(); }

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
    d["partition_lag"] = m.partition_lag;
    return d;
  }

 private:
  std::unique_ptr<Loader> l_;
};

PyLoader CreateLoader(const std::vector<std::string>& uris, const std::vector<double>& weights, uint32_t seq_len,
                      uint32_t batch_size, uint32_t rank, uint32_t world_size, uint64_t seed, bool shuffle,
                      uint32_t block_records, uint32_t window_blocks, uint32_t epochs, bool pack,
                      std::optional<uint32_t> bos_id, std::optional<uint32_t> eos_id, uint32_t pad_id,
                      int64_t ignore_index, bool cross_document_labels, bool int32_ids, uint64_t memory_budget_bytes,
                      uint32_t prefetch_batches, const std::string& snapshot,
                      const std::vector<std::string>& kafka_properties) {
  LoaderOptions o;
  for (size_t i = 0; i < uris.size(); ++i) o.sources.push_back({uris[i], i < weights.size() ? weights[i] : 1.0});
  o.seq_len = seq_len;
  o.batch_size = batch_size;
  o.rank = rank;
  o.world_size = world_size;
  o.seed = seed;
  o.shuffle = shuffle;
  o.block_records = block_records;
  o.window_blocks = window_blocks;
  o.epochs = epochs;
  o.pack = pack;
  o.bos_id = bos_id;
  o.eos_id = eos_id;
  o.pad_id = pad_id;
  o.ignore_index = ignore_index;
  o.cross_document_labels = cross_document_labels;
  o.int32_ids = int32_ids;
  o.memory_budget_bytes = memory_budget_bytes;
  o.prefetch_batches = prefetch_batches;
  o.snapshot_json = snapshot;
  o.kafka_properties = kafka_properties;
  Result<std::unique_ptr<Loader>> r = Status::Internal("not created");
  {
    nb::gil_scoped_release release;
    r = Loader::Create(o);
  }
  return PyLoader(ValueOrThrow(std::move(r)));
}

}  // namespace

void RegisterLoader(nb::module_& m) {
  nb::class_<PyLoader>(m, "_Loader")
      .def("next", &PyLoader::Next)
      .def("state", &PyLoader::State)
      .def("load_state", &PyLoader::LoadState)
      .def("snapshot", &PyLoader::Snapshot)
      .def("metrics", &PyLoader::Metrics);
  m.def("_create_loader", &CreateLoader, nb::arg("uris"), nb::arg("weights"), nb::arg("seq_len"),
        nb::arg("batch_size"), nb::arg("rank"), nb::arg("world_size"), nb::arg("seed"), nb::arg("shuffle"),
        nb::arg("block_records"), nb::arg("window_blocks"), nb::arg("epochs"), nb::arg("pack"), nb::arg("bos_id").none(),
        nb::arg("eos_id").none(), nb::arg("pad_id"), nb::arg("ignore_index"), nb::arg("cross_document_labels"),
        nb::arg("int32_ids"), nb::arg("memory_budget_bytes"), nb::arg("prefetch_batches"), nb::arg("snapshot"),
        nb::arg("kafka_properties"));
  m.def("_take_snapshot", [](const std::vector<std::string>& uris, const std::vector<std::string>& kafka) {
    std::vector<LoaderSource> sources;
    for (const auto& u : uris) sources.push_back({u, 1.0});
    Result<std::string> r = Status::Internal("no snapshot");
    {
      nb::gil_scoped_release release;
      r = TakeSnapshot(sources, kafka);
    }
    return ValueOrThrow(std::move(r));
  });
}

}  // namespace tokenfeed::python
