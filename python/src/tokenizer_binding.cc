// Python binding of tokenfeed::Tokenizer. Long texts and batches are encoded
// without the GIL. A batch's numpy arrays, and one text's when it has many
// ids, are handed over without a copy (the array keeps the native buffer
// alive); the ids of a shorter text are copied into a new numpy array, which
// is cheaper for the short results most calls give (CopyToNumpy).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "argument.h"
#include "status_to_exception.h"
#include "tokenfeed/tokenizer.h"

namespace nb = nanobind;

namespace tokenfeed::python {
namespace {

// Text from str (UTF-8; lone surrogates are left to the UTF-8 policy via
// surrogatepass) or from bytes (used as they are).
std::string_view TextOf(nb::handle obj, std::string* storage) {
  if (PyBytes_Check(obj.ptr())) {
    char* data;
    Py_ssize_t size;
    PyBytes_AsStringAndSize(obj.ptr(), &data, &size);
    return std::string_view(data, static_cast<size_t>(size));
  }
  if (!PyUnicode_Check(obj.ptr())) throw nb::type_error("text must be str or bytes");
  Py_ssize_t size;
  const char* data = PyUnicode_AsUTF8AndSize(obj.ptr(), &size);
  if (data) return std::string_view(data, static_cast<size_t>(size));
  PyErr_Clear();
  // A str with lone surrogates has no UTF-8 form: encode them as the bytes
  // they would be, which are then invalid UTF-8 for the policy to handle.
  PyObject* b = PyUnicode_AsEncodedString(obj.ptr(), "utf-8", "surrogatepass");
  if (!b) throw nb::python_error();
  storage->assign(PyBytes_AS_STRING(b), static_cast<size_t>(PyBytes_GET_SIZE(b)));
  Py_DECREF(b);
  return *storage;
}

Utf8Policy ParsePolicy(const std::string& utf8) {
  Result<Utf8Policy> policy = ParseUtf8Policy(utf8);
  if (!policy.ok()) RaiseInvalidArgument("utf8: " + policy.status().message());
  return *policy;
}

template <typename T>
nb::ndarray<nb::numpy, T, nb::ndim<1>> ToNumpy(std::vector<T>&& v) {
  auto* owned = new std::vector<T>(std::move(v));
  nb::capsule deleter(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  size_t shape[1] = {owned->size()};
  return nb::ndarray<nb::numpy, T, nb::ndim<1>>(owned->data(), 1, shape, deleter);
}

// numpy.empty and the uint32 dtype, looked up on first use with the GIL held
// and kept for the life of the process (never released: they may be needed,
// or freed, after this module's statics are gone at exit).
PyObject* g_numpy_empty = nullptr;
PyObject* g_numpy_uint32 = nullptr;

void LookUpNumpy() {
  if (g_numpy_empty != nullptr) return;
  // The import may let other threads run, and they may look up too: the
  // first to come back sets both, with nothing in between that could switch.
  nb::module_ np = nb::module_::import_("numpy");
  nb::object empty = np.attr("empty");
  nb::object dtype = np.attr("dtype")("uint32");
  if (g_numpy_empty != nullptr) return;
  g_numpy_uint32 = dtype.release().ptr();
  g_numpy_empty = empty.release().ptr();
}

// A new, writable numpy array of uint32 that owns a copy of `ids`: made by
// numpy.empty and filled through the buffer protocol. About 0.2 us a call,
// where handing the vector over as an nb::ndarray costs over 1 us (nanobind
// wraps it in a buffer object and calls numpy.array on that): most single
// texts give a few hundred ids. For at most kCopyIdsAtMost ids, so that the
// copy, made with the GIL held, stays short (256 KiB at most).
constexpr size_t kCopyIdsAtMost = size_t{1} << 16;

nb::object CopyToNumpy(const std::vector<uint32_t>& ids) {
  LookUpNumpy();
  nb::object count = nb::steal(PyLong_FromSize_t(ids.size()));
  if (!count.is_valid()) throw nb::python_error();
  PyObject* args[2] = {count.ptr(), g_numpy_uint32};
  nb::object array = nb::steal(PyObject_Vectorcall(g_numpy_empty, args, 2, nullptr));
  if (!array.is_valid()) throw nb::python_error();
  Py_buffer view;
  if (PyObject_GetBuffer(array.ptr(), &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) throw nb::python_error();
  const size_t bytes = ids.size() * sizeof(uint32_t);
  const Py_ssize_t got = view.len;
  const bool fits = got >= 0 && static_cast<size_t>(got) == bytes;
  if (fits && bytes != 0) std::memcpy(view.buf, ids.data(), bytes);
  PyBuffer_Release(&view);
  if (!fits) {
    ThrowIfError(Status::Internal("numpy.empty(" + std::to_string(ids.size()) + ", uint32) gave " +
                                  std::to_string(got) + " bytes, expected " + std::to_string(bytes)));
  }
  return array;
}

// One Python int per token id, made once: a list of ids is then built by
// taking references instead of allocating an int per token (ids above 256 are
// not in Python's own small-int cache). Touched with the GIL held only.
class IdObjects {
 public:
  explicit IdObjects(uint32_t count) {
    objs_.reserve(count);
    for (uint32_t id = 0; id < count; ++id) {
      PyObject* o = PyLong_FromUnsignedLong(id);
      if (!o) throw nb::python_error();
      objs_.push_back(o);
    }
  }
  IdObjects(const IdObjects&) = delete;
  IdObjects& operator=(const IdObjects&) = delete;
  ~IdObjects() {
    if (!Py_IsInitialized()) return;
    for (PyObject* o : objs_) Py_DECREF(o);
  }

  nb::list ToList(const std::vector<TokenId>& ids) const {
    PyObject* list = PyList_New(static_cast<Py_ssize_t>(ids.size()));
    if (!list) throw nb::python_error();
    const size_t n = ids.size(), limit = objs_.size();
    for (size_t i = 0; i < n; ++i) {
      // The reference counts written below are spread over megabytes: fetch
      // the object kAhead on (its pointer was fetched kAhead before that).
      if (i + 2 * kAhead < n && ids[i + 2 * kAhead] < limit) __builtin_prefetch(&objs_[ids[i + 2 * kAhead]]);
      if (i + kAhead < n && ids[i + kAhead] < limit) __builtin_prefetch(objs_[ids[i + kAhead]], 1);
      PyObject* o;
      if (ids[i] < limit) {
        o = objs_[ids[i]];
        Py_INCREF(o);
      } else {
        o = PyLong_FromUnsignedLong(ids[i]);
        if (!o) {
          Py_DECREF(list);
          throw nb::python_error();
        }
      }
      PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), o);
    }
    return nb::steal<nb::list>(list);
  }

 private:
  // How many ids ahead ToList fetches: 3-9 % faster encode() one document a
  // call on text seen before (DeepSeek-V3, paired runs).
  static constexpr size_t kAhead = 8;
  std::vector<PyObject*> objs_;
};

// A text this long or longer is encoded without the GIL (about 0.2 ms and
// up, time other Python threads can use); a shorter one keeps it, as giving
// it up and taking it back is a noticeable part of a short call.
constexpr size_t kReleaseGilBytes = 8192;

class PyTokenizer {
 public:
  explicit PyTokenizer(std::shared_ptr<const Tokenizer> t) : t_(std::move(t)) {}

  static PyTokenizer FromFile(const std::string& path, bool fast_pretokenizers, size_t word_cache_entries) {
    TokenizerOptions opts;
    opts.fast_pretokenizers = fast_pretokenizers;
    opts.word_cache_entries = word_cache_entries;
    Result<std::shared_ptr<const Tokenizer>> r = Status::Internal("not loaded");
    {
      nb::gil_scoped_release release;
      r = Tokenizer::FromFile(path, opts);
    }
    return PyTokenizer(ValueOrThrow(std::move(r)));
  }

  static PyTokenizer FromStr(const std::string& json, bool fast_pretokenizers, size_t word_cache_entries) {
    TokenizerOptions opts;
    opts.fast_pretokenizers = fast_pretokenizers;
    opts.word_cache_entries = word_cache_entries;
    return PyTokenizer(ValueOrThrow(Tokenizer::FromJson(json, "<json string>", opts)));
  }

  std::vector<TokenId> EncodeIds(nb::handle text, bool add_special, bool split_special, const std::string& utf8) {
    std::string storage;
    std::string_view view = TextOf(text, &storage);
    EncodeOptions o{add_special, split_special, ParsePolicy(utf8)};
    std::vector<TokenId> ids;
    ids.reserve(view.size() / 4 + 8);
    Status s;
    if (view.size() < kReleaseGilBytes) {
      s = t_->Encode(view, &ids, o);
    } else {
      nb::gil_scoped_release release;
      s = t_->Encode(view, &ids, o);
    }
    ThrowIfError(s);
    return ids;
  }

  nb::list Encode(nb::handle text, bool add_special, bool split_special, const std::string& utf8) {
    return Ids().ToList(EncodeIds(text, add_special, split_special, utf8));
  }

  nb::object EncodeNumpy(nb::handle text, bool add_special, bool split_special, const std::string& utf8) {
    std::vector<TokenId> ids = EncodeIds(text, add_special, split_special, utf8);
    if (ids.size() <= kCopyIdsAtMost) return CopyToNumpy(ids);
    return nb::cast(ToNumpy(std::move(ids)));
  }

  // Views of every text and what they point into: each item's own object
  // (a sequence need not hold its items: a numpy array of str or a
  // generator-backed sequence makes a new object per access), or storage.
  struct BatchInput {
    std::vector<nb::object> items;
    std::vector<std::string> storage;
    std::vector<std::string_view> views;
  };
  static BatchInput Collect(nb::handle texts) {
    if (PyUnicode_Check(texts.ptr()) || PyBytes_Check(texts.ptr())) {
      throw nb::type_error("texts must be a list of str or bytes, not one text: use encode() for a single text, or "
                           "encode_batch([text])");
    }
    if (!PySequence_Check(texts.ptr())) {
      throw nb::type_error((std::string("texts must be a sequence of str or bytes, not ") +
                            Py_TYPE(texts.ptr())->tp_name)
                               .c_str());
    }
    BatchInput in;
    nb::sequence seq = nb::borrow<nb::sequence>(texts);
    size_t n = nb::len(seq);
    in.items.reserve(n);
    in.storage.resize(n);
    in.views.resize(n);
    for (size_t i = 0; i < n; ++i) {
      in.items.push_back(seq[i]);
      in.views[i] = TextOf(in.items.back(), &in.storage[i]);
    }
    return in;
  }

  static int ThreadsOf(nb::handle num_threads) {
    return static_cast<int>(IntegerArgument(num_threads, "num_threads", 0, 4096));
  }

  nb::list EncodeBatch(nb::handle texts, bool add_special, bool split_special, const std::string& utf8,
                       nb::handle num_threads_arg) {
    const int num_threads = ThreadsOf(num_threads_arg);
    BatchInput in = Collect(texts);
    EncodeOptions o{add_special, split_special, ParsePolicy(utf8)};
    std::vector<std::vector<TokenId>> out;
    Status s;
    {
      nb::gil_scoped_release release;
      s = t_->EncodeBatch(in.views, &out, o, num_threads);
    }
    ThrowIfError(s);
    const IdObjects& objs = Ids();
    nb::list result;
    for (const std::vector<TokenId>& ids : out) result.append(objs.ToList(ids));
    return result;
  }

  // Flat ids and offsets (CSR): text i is ids[offsets[i]:offsets[i+1]].
  nb::tuple EncodeBatchNumpy(nb::handle texts, bool add_special, bool split_special, const std::string& utf8,
                             nb::handle num_threads_arg) {
    const int num_threads = ThreadsOf(num_threads_arg);
    BatchInput in = Collect(texts);
    EncodeOptions o{add_special, split_special, ParsePolicy(utf8)};
    std::vector<std::vector<TokenId>> out;
    std::vector<uint32_t> flat;
    std::vector<int64_t> offsets;
    Status s;
    {
      nb::gil_scoped_release release;
      s = t_->EncodeBatch(in.views, &out, o, num_threads);
      if (s.ok()) {
        size_t total = 0;
        for (auto& v : out) total += v.size();
        flat.reserve(total);
        offsets.reserve(out.size() + 1);
        offsets.push_back(0);
        for (auto& v : out) {
          flat.insert(flat.end(), v.begin(), v.end());
          offsets.push_back(static_cast<int64_t>(flat.size()));
        }
      }
    }
    ThrowIfError(s);
    return nb::make_tuple(ToNumpy(std::move(flat)), ToNumpy(std::move(offsets)));
  }

  std::string Decode(nb::handle ids_arg, bool skip_special) {
    if (PyUnicode_Check(ids_arg.ptr()) || PyBytes_Check(ids_arg.ptr()) || !PySequence_Check(ids_arg.ptr())) {
      throw nb::type_error((std::string("ids must be a sequence of token ids, not ") + Py_TYPE(ids_arg.ptr())->tp_name)
                               .c_str());
    }
    PyObject* fast = PySequence_Fast(ids_arg.ptr(), "ids must be a sequence of token ids");
    if (fast == nullptr) throw nb::python_error();
    nb::object hold = nb::steal(fast);
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    PyObject** items = PySequence_Fast_ITEMS(fast);
    std::vector<TokenId> ids(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* o = items[i];
      // The common case, an int in range, without building a name.
      if (PyLong_CheckExact(o)) {
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow == 0 && v >= 0 && v <= UINT32_MAX) {
          ids[static_cast<size_t>(i)] = static_cast<TokenId>(v);
          continue;
        }
      }
      const std::string name = "ids[" + std::to_string(i) + "]";
      ids[static_cast<size_t>(i)] = static_cast<TokenId>(UnsignedArgument(o, name.c_str(), UINT32_MAX));
    }
    Result<std::string> r = Status::Internal("not decoded");
    {
      nb::gil_scoped_release release;
      r = t_->Decode(ids, DecodeOptions{skip_special});
    }
    return ValueOrThrow(std::move(r));
  }

  std::shared_ptr<const Tokenizer> native() const { return t_; }
  const Tokenizer& t() const { return *t_; }

 private:
  const IdObjects& Ids() {
    if (!ids_) ids_ = std::make_shared<IdObjects>(t_->id_limit());
    return *ids_;
  }

  std::shared_ptr<const Tokenizer> t_;
  std::shared_ptr<IdObjects> ids_;  // made on first use
};

TokenId IdOf(nb::handle id) { return static_cast<TokenId>(UnsignedArgument(id, "id", UINT32_MAX)); }

}  // namespace

void RegisterTokenizer(nb::module_& m) {
  nb::class_<PyTokenizer>(m, "Tokenizer",
                          "An exact, fast BPE tokenizer (byte-level or SentencePiece-style) loaded from a Hugging Face "
                          "tokenizer.json.\n\n"
                          "Its ids equal those of the reference ``tokenizers`` package for the same file. "
                          "Methods may be called from several threads; long texts and batches are encoded "
                          "without the GIL.")
      .def_static("from_file", &PyTokenizer::FromFile, nb::arg("path"), nb::kw_only(),
                  nb::arg("fast_pretokenizers") = true, nb::arg("word_cache_entries") = size_t{1} << 19,
                  "Loads a tokenizer.json file.\n\n"
                  "path: the file. fast_pretokenizers: use the hand-written scanners for the known split "
                  "patterns (the same output as the regex, faster); False runs the regex engine. "
                  "word_cache_entries: how many distinct words each encoding thread keeps the BPE result "
                  "of, 1 to 2**26 (the default 524288 takes about 44 MB a thread once full on mixed text, at most about 80 MiB; encode_batch keeps up to one such cache per usable CPU between calls); the ids never "
                  "depend on it.\n"
                  "Raises NotFoundError for a missing file, UnsupportedError for a model other than "
                  "BPE or an option tokenfeed does not implement, InvalidArgumentError for a malformed file.")
      .def_static("from_str", &PyTokenizer::FromStr, nb::arg("json"), nb::kw_only(),
                  nb::arg("fast_pretokenizers") = true, nb::arg("word_cache_entries") = size_t{1} << 19,
                  "Loads a tokenizer from the text of a tokenizer.json (see from_file).")
      .def("encode", &PyTokenizer::Encode, nb::arg("text"), nb::kw_only(), nb::arg("add_special_tokens") = false,
           nb::arg("split_special_tokens") = false, nb::arg("utf8") = "replace",
           "The token ids of one text (str or UTF-8 bytes), as a list of int.\n\n"
           "add_special_tokens: apply the post-processor (BOS/EOS as the tokenizer.json says). "
           "split_special_tokens: treat special-token strings in the text as plain text. "
           "utf8: 'replace' turns invalid UTF-8 (bytes, lone surrogates) into U+FFFD; 'reject' raises "
           "InvalidArgumentError naming the byte offset.")
      .def("encode_numpy", &PyTokenizer::EncodeNumpy, nb::arg("text"), nb::kw_only(),
           nb::arg("add_special_tokens") = false, nb::arg("split_special_tokens") = false,
           nb::arg("utf8") = "replace",
           nb::sig("def encode_numpy(self, text: object, *, add_special_tokens: bool = False, "
                   "split_special_tokens: bool = False, utf8: str = 'replace') "
                   "-> numpy.ndarray[dtype=uint32, shape=(*)]"),
           "As encode(), as a new numpy uint32 array (no per-id Python objects).")
      .def("encode_batch", &PyTokenizer::EncodeBatch, nb::arg("texts"), nb::kw_only(),
           nb::arg("add_special_tokens") = false, nb::arg("split_special_tokens") = false,
           nb::arg("utf8") = "replace", nb::arg("num_threads") = 0,
           "The ids of each text of a sequence (a list of str or bytes, not one str), as a list of lists.\n\n"
           "num_threads: 0 uses every CPU the process may use (affinity mask, cgroup quota), 1 the calling thread only (at most 4096). Other "
           "parameters as for encode(); an error names the text's index.")
      .def("encode_batch_numpy", &PyTokenizer::EncodeBatchNumpy, nb::arg("texts"), nb::kw_only(),
           nb::arg("add_special_tokens") = false, nb::arg("split_special_tokens") = false,
           nb::arg("utf8") = "replace", nb::arg("num_threads") = 0,
           "As encode_batch(), as (ids, offsets): a flat uint32 array and int64 offsets, text i being "
           "ids[offsets[i]:offsets[i+1]].")
      .def("decode", &PyTokenizer::Decode, nb::arg("ids"), nb::kw_only(), nb::arg("skip_special_tokens") = false,
           "The text of a sequence of token ids (ints, numpy integers included).\n\n"
           "skip_special_tokens: leave special tokens out. An id that is negative or not in the "
           "vocabulary raises InvalidArgumentError.")
      .def("token_to_id", [](const PyTokenizer& t, const std::string& s) { return t.t().TokenToId(s); },
           nb::arg("token"), "The id of a token string (as in the vocabulary), or None.")
      .def("id_to_token", [](const PyTokenizer& t, nb::handle id) { return t.t().IdToToken(IdOf(id)); },
           nb::arg("id"), "The token string of an id, or None when the id is not in the vocabulary.")
      .def("is_special", [](const PyTokenizer& t, nb::handle id) { return t.t().IsSpecial(IdOf(id)); },
           nb::arg("id"), "Whether the id is a special (added) token.")
      .def_prop_ro("vocab_size", [](const PyTokenizer& t) { return t.t().id_limit(); },
                   "One more than the largest id (vocabulary and added tokens).")
      .def_prop_ro("bos_id", [](const PyTokenizer& t) { return t.t().bos_id(); },
                   "The beginning-of-text id the post-processor adds, or None.")
      .def_prop_ro("eos_id", [](const PyTokenizer& t) { return t.t().eos_id(); },
                   "The end-of-text id, or None.")
      .def("describe", [](const PyTokenizer& t) { return t.t().Describe(); },
           "A few lines on the pipeline: normalizer, pre-tokenizer, model, post-processor.");
}

}  // namespace tokenfeed::python
