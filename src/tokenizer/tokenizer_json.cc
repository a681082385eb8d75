// Loading a tokenizer.json (the Hugging Face tokenizers serialization) into a
// TokenizerImpl. Cold path: clarity over speed. Every error names the file and
// the JSON path of the offending value.
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <map>
#include <unordered_map>
#include <sstream>

#include <simdjson.h>

#include "base/utf8.h"
#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/unicode_class.h"

namespace tokenfeed {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;
namespace tk = tokenfeed::tokenizer;

// Reads a tokenizer.json document into a Tokenizer, naming the JSON path of
// whatever it refuses.
class TokenizerJsonParser {
 public:
  TokenizerJsonParser(std::string_view origin, const TokenizerOptions& options) : origin_(origin), options_(options) {}

  Result<std::shared_ptr<const Tokenizer>> Load(std::string_view json) {
    simdjson::dom::parser parser;
    simdjson::padded_string padded(json);
    element root;
    if (auto err = parser.parse(padded).get(root)) {
      return Status::InvalidArgument(origin_ + ": not valid JSON: " + simdjson::error_message(err));
    }
    object top;
    if (root.get(top)) return Error("", "the top level is not a JSON object");

    // The pre-tokenizer decides how the vocabulary is spelled: a final
    // ByteLevel step means byte-level BPE, anything else (none, Metaspace,
    // Split...) character-level BPE on the normalized text's characters.
    std::vector<tk::PreTokenizerStage> stages;
    element pre_el;
    if (!top["pre_tokenizer"].get(pre_el) && !IsNull(pre_el)) {
      TF_RETURN_IF_ERROR(ParsePreTokenizer(pre_el, "pre_tokenizer", &stages));
    }
    for (size_t i = 0; i + 1 < stages.size(); ++i) {
      if (stages[i].kind == tk::PreTokenizerStage::Kind::kByteLevel) {
        return Error("pre_tokenizer", "ByteLevel must be the last pre-tokenizer step");
      }
    }
    const bool byte_level = !stages.empty() && stages.back().kind == tk::PreTokenizerStage::Kind::kByteLevel;

    element model_el;
    if (top["model"].get(model_el)) return Error("model", "missing");
    TF_ASSIGN_OR_RETURN(tk::BpeSpec bpe_spec, ParseModel(model_el));
    bpe_spec.byte_level = byte_level;
    TF_ASSIGN_OR_RETURN(tk::BpeModel model, WithOrigin(tk::BpeModel::Build(bpe_spec)));

    std::vector<tk::AddedTokenSpec> added;
    element added_el;
    if (!top["added_tokens"].get(added_el) && !IsNull(added_el)) {
      TF_ASSIGN_OR_RETURN(std::vector<tk::AddedTokenSpec> listed, ParseAddedTokens(added_el));
      added = AssignAddedTokenIds(std::move(listed), model);
    }

    std::unique_ptr<tk::Normalizer> normalizer;
    element norm_el;
    if (!top["normalizer"].get(norm_el) && !IsNull(norm_el)) {
      TF_ASSIGN_OR_RETURN(normalizer, ParseNormalizer(norm_el, "normalizer"));
    }
    // Metaspace's "first" asks whether a piece starts at offset 0 of the
    // input; the reference answers from the normalizer's alignments, which a
    // normalizer that removes the text's first characters moves. tokenfeed
    // does not track them, so it refuses that pairing rather than differ.
    for (size_t i = 0; i < stages.size(); ++i) {
      if (stages[i].kind == tk::PreTokenizerStage::Kind::kMetaspace &&
          stages[i].prepend == tk::PrependScheme::kFirst && !start_dropping_normalizer_.empty()) {
        return Unsupported(metaspace_paths_[i] + ".prepend_scheme",
                           "\"first\" after a normalizer that can remove the text's first characters (" +
                               start_dropping_normalizer_ + ") is not supported");
      }
    }

    tk::PostProcessorSpec post;
    element post_el;
    if (!top["post_processor"].get(post_el) && !IsNull(post_el)) {
      TF_RETURN_IF_ERROR(ParsePostProcessor(post_el, "post_processor", model, added, &post));
      TF_RETURN_IF_ERROR(CheckPostProcessorIds(post, model, added));
    }

    tk::DecoderKind decoder = tk::DecoderKind::kNone;
    std::string decoder_name = "none";
    std::unique_ptr<tk::TokenDecoder> token_decoder;
    element dec_el;
    if (!top["decoder"].get(dec_el) && !IsNull(dec_el)) {
      std::vector<tk::DecoderStep> steps;
      Status parsed = ParseDecoder(dec_el, "decoder", &steps, &decoder_name);
      if (!parsed.ok()) {
        // An unsupported decoder does not stop loading: encoding does not
        // need it, and Decode then says which decoder it lacks.
        decoder = tk::DecoderKind::kUnsupported;
        if (parsed.code() != StatusCode::kUnsupported) decoder_name = "(malformed)";
      } else if (byte_level && steps.size() == 1 && steps[0].kind == tk::DecoderStep::Kind::kByteLevel) {
        decoder = tk::DecoderKind::kByteLevel;
        decoder_name = "ByteLevel";
      } else {
        decoder = tk::DecoderKind::kChain;
        token_decoder = std::make_unique<tk::TokenDecoder>(std::move(steps));
      }
    }

    auto pre = std::make_unique<tk::PreTokenizer>(std::move(stages));
    auto impl = std::make_shared<tk::TokenizerImpl>(std::move(normalizer), std::move(pre), std::move(added),
                                                    std::move(model), std::move(post), decoder,
                                                    std::move(token_decoder), std::move(decoder_name), origin_);
    impl->set_word_cache_entries(options_.word_cache_entries);
    return std::shared_ptr<const Tokenizer>(std::move(impl));
  }

 private:
  Status Error(std::string_view path, std::string_view what) const {
    std::string m = origin_;
    if (!path.empty()) m.append(": ").append(path);
    m.append(": ").append(what);
    return Status::InvalidArgument(std::move(m));
  }
  Status Unsupported(std::string_view path, std::string_view what) const {
    return Status::Unsupported(origin_ + ": " + std::string(path) + ": " + std::string(what));
  }
  template <typename T>
  Result<T> WithOrigin(Result<T> r) const {
    if (r.ok()) return r;
    return r.status().WithContext(origin_);
  }

  static bool IsNull(const element& e) { return e.type() == element_type::NULL_VALUE; }

  Result<std::string> GetString(const object& o, std::string_view key, std::string_view path) const {
    std::string_view s;
    if (o[key].get(s)) return Error(std::string(path) + "." + std::string(key), "missing or not a string");
    return std::string(s);
  }
  // A boolean field; absent or null gives `fallback`.
  Result<bool> GetBool(const object& o, std::string_view key, std::string_view path, bool fallback) const {
    element e;
    if (o[key].get(e) || IsNull(e)) return fallback;
    bool b;
    if (e.get(b)) return Error(std::string(path) + "." + std::string(key), "not a boolean");
    return b;
  }
  Result<std::string> GetType(const element& e, std::string_view path) const {
    object o;
    if (e.get(o)) return Error(path, "not a JSON object");
    return GetString(o, "type", path);
  }

  Result<tk::BpeSpec> ParseModel(const element& e) {
    object o;
    if (e.get(o)) return Error("model", "not a JSON object");
    std::string_view type;
    if (!o["type"].get(type) && type != "BPE") {
      return Unsupported("model.type", std::string(type) + " is not supported (tokenfeed implements byte-level BPE)");
    }
    tk::BpeSpec spec;
    element dropout;
    if (!o["dropout"].get(dropout) && !IsNull(dropout)) {
      double d = 0;
      if (dropout.get(d)) return Error("model.dropout", "not a number");
      if (d != 0.0) return Unsupported("model.dropout", "BPE dropout is random; tokenfeed encodes deterministically");
    }
    object vocab;
    if (o["vocab"].get(vocab)) return Error("model.vocab", "missing or not an object");
    spec.vocab.reserve(vocab.size());
    for (auto [key, value] : vocab) {
      uint64_t id;
      if (value.get(id) || id >= UINT32_MAX) {
        return Error("model.vocab[\"" + std::string(key) + "\"]", "not a token id (an integer below 2^32-1)");
      }
      spec.vocab.emplace_back(std::string(key), static_cast<uint32_t>(id));
    }
    array merges;
    if (o["merges"].get(merges)) return Error("model.merges", "missing or not an array");
    size_t index = 0, rank = 0;
    for (element m : merges) {
      std::string path = "model.merges[" + std::to_string(index++) + "]";
      std::string_view line;
      if (!m.get(line)) {
        // Legacy syntax: "a b" (lines starting with #version are skipped).
        if (line.substr(0, 8) == "#version") continue;
        size_t sp = line.find(' ');
        if (sp == std::string_view::npos || line.find(' ', sp + 1) != std::string_view::npos) {
          return Error(path, "merge line \"" + std::string(line) + "\" is not two tokens separated by one space");
        }
        spec.merges.emplace_back(std::string(line.substr(0, sp)), std::string(line.substr(sp + 1)));
      } else {
        array pair;
        std::string_view a, b;
        if (m.get(pair) || pair.size() != 2 || pair.at(0).get(a) || pair.at(1).get(b)) {
          return Error(path, "not a string \"a b\" or a pair [\"a\", \"b\"]");
        }
        spec.merges.emplace_back(std::string(a), std::string(b));
      }
      ++rank;
    }
    element unk;
    if (!o["unk_token"].get(unk) && !IsNull(unk)) {
      std::string_view u;
      if (unk.get(u)) return Error("model.unk_token", "not a string");
      spec.unk_token = std::string(u);
    }
    for (auto [key, target] : {std::pair{"continuing_subword_prefix", &spec.continuing_subword_prefix},
                               std::pair{"end_of_word_suffix", &spec.end_of_word_suffix}}) {
      element v;
      if (!o[key].get(v) && !IsNull(v)) {
        std::string_view s;
        if (v.get(s)) return Error(std::string("model.") + key, "not a string");
        *target = std::string(s);
      }
    }
    TF_ASSIGN_OR_RETURN(spec.fuse_unk, GetBool(o, "fuse_unk", "model", false));
    TF_ASSIGN_OR_RETURN(spec.byte_fallback, GetBool(o, "byte_fallback", "model", false));
    TF_ASSIGN_OR_RETURN(spec.ignore_merges, GetBool(o, "ignore_merges", "model", false));
    return spec;
  }

  Result<std::vector<tk::AddedTokenSpec>> ParseAddedTokens(const element& e) {
    array arr;
    if (e.get(arr)) return Error("added_tokens", "not an array");
    std::vector<tk::AddedTokenSpec> out;
    size_t index = 0;
    for (element t : arr) {
      std::string path = "added_tokens[" + std::to_string(index++) + "]";
      object o;
      if (t.get(o)) return Error(path, "not an object");
      tk::AddedTokenSpec spec;
      uint64_t id;
      if (o["id"].get(id) || id >= UINT32_MAX) return Error(path + ".id", "missing or not a token id");
      spec.id = static_cast<uint32_t>(id);
      TF_ASSIGN_OR_RETURN(spec.content, GetString(o, "content", path));
      TF_ASSIGN_OR_RETURN(spec.special, GetBool(o, "special", path, false));
      TF_ASSIGN_OR_RETURN(spec.single_word, GetBool(o, "single_word", path, false));
      TF_ASSIGN_OR_RETURN(spec.lstrip, GetBool(o, "lstrip", path, false));
      TF_ASSIGN_OR_RETURN(spec.rstrip, GetBool(o, "rstrip", path, false));
      TF_ASSIGN_OR_RETURN(spec.normalized, GetBool(o, "normalized", path, !spec.special));
      out.push_back(std::move(spec));
    }
    return out;
  }

  // The reference does not take added tokens' ids from the file: it adds
  // them in order, giving each the id its content has in the vocabulary, or
  // else the next free id after the vocabulary. (Files it wrote agree.)
  static std::vector<tk::AddedTokenSpec> AssignAddedTokenIds(std::vector<tk::AddedTokenSpec> listed,
                                                             const tk::BpeModel& model) {
    const uint32_t vocab_size = static_cast<uint32_t>(model.vocab_size());
    uint32_t next_id = vocab_size;
    std::unordered_map<std::string, uint32_t> id_of_content;
    std::map<uint32_t, tk::AddedTokenSpec> token_of_id;
    auto same = [](const tk::AddedTokenSpec& a, const tk::AddedTokenSpec& b) {
      return a.content == b.content && a.single_word == b.single_word && a.lstrip == b.lstrip &&
             a.rstrip == b.rstrip && a.normalized == b.normalized && a.special == b.special;
    };
    for (tk::AddedTokenSpec& t : listed) {
      if (t.content.empty()) continue;
      auto known = id_of_content.find(t.content);
      if (known != id_of_content.end()) {
        auto it = token_of_id.find(known->second);
        if (it != token_of_id.end() && same(it->second, t)) continue;
      }
      uint32_t id;
      if (known != id_of_content.end()) {
        id = known->second;
      } else if (auto in_vocab = model.TextToId(t.content)) {
        id = *in_vocab;
      } else {
        id = next_id++;
      }
      t.id = id;
      id_of_content[t.content] = id;
      token_of_id[id] = t;
    }
    std::vector<tk::AddedTokenSpec> out;
    out.reserve(token_of_id.size());
    for (auto& [id, t] : token_of_id) out.push_back(std::move(t));
    return out;
  }

  // A Split or Replace pattern: {"Regex": "..."} or {"String": "..."}.
  Result<std::unique_ptr<tk::SplitMatcher>> ParsePattern(const object& o, std::string_view path) {
    object pat;
    if (o["pattern"].get(pat)) return Error(std::string(path) + ".pattern", "missing or not an object");
    std::string_view s;
    if (!pat["Regex"].get(s)) {
      const std::string where = origin_ + ": " + std::string(path) + ".pattern.Regex";
      auto m = tk::MakeSplitMatcher(s, options_.fast_pretokenizers, where);
      if (!m.ok()) return m.status().WithContext(where);
      return std::move(m).value();
    }
    if (!pat["String"].get(s)) return tk::MakeLiteralMatcher(s);
    return Error(std::string(path) + ".pattern", "neither {\"Regex\": ...} nor {\"String\": ...}");
  }

  Result<std::unique_ptr<tk::Normalizer>> ParseNormalizer(const element& e, const std::string& path) {
    TF_ASSIGN_OR_RETURN(std::string type, GetType(e, path));
    object o;
    if (e.get(o)) return Error(path, "not a JSON object");
    if (type == "Sequence") {
      array arr;
      if (o["normalizers"].get(arr)) return Error(path + ".normalizers", "missing or not an array");
      std::vector<std::unique_ptr<tk::Normalizer>> steps;
      size_t i = 0;
      for (element child : arr) {
        TF_ASSIGN_OR_RETURN(auto step, ParseNormalizer(child, path + ".normalizers[" + std::to_string(i++) + "]"));
        steps.push_back(std::move(step));
      }
      if (steps.empty()) return std::unique_ptr<tk::Normalizer>();
      if (steps.size() == 1) return std::move(steps.front());
      return tk::MakeSequenceNormalizer(std::move(steps));
    }
    if (type == "NFC") return tk::MakeUnicodeNormalizer(tk::UnicodeForm::kNfc);
    if (type == "NFD") return tk::MakeUnicodeNormalizer(tk::UnicodeForm::kNfd);
    if (type == "NFKC") return tk::MakeUnicodeNormalizer(tk::UnicodeForm::kNfkc);
    if (type == "NFKD") return tk::MakeUnicodeNormalizer(tk::UnicodeForm::kNfkd);
    if (type == "Lowercase") return tk::MakeLowercaseNormalizer();
    if (type == "Strip") {
      TF_ASSIGN_OR_RETURN(bool left, GetBool(o, "strip_left", path, true));
      TF_ASSIGN_OR_RETURN(bool right, GetBool(o, "strip_right", path, true));
      if (left && start_dropping_normalizer_.empty()) start_dropping_normalizer_ = path;
      return tk::MakeStripNormalizer(left, right);
    }
    if (type == "Prepend") {
      TF_ASSIGN_OR_RETURN(std::string prefix, GetString(o, "prepend", path));
      return tk::MakePrependNormalizer(std::move(prefix));
    }
    if (type == "Replace") {
      TF_ASSIGN_OR_RETURN(auto pattern, ParsePattern(o, path));
      TF_ASSIGN_OR_RETURN(std::string content, GetString(o, "content", path));
      if (content.empty() && start_dropping_normalizer_.empty()) start_dropping_normalizer_ = path;
      return tk::MakeReplaceNormalizer(std::move(pattern), std::move(content));
    }
    return Unsupported(path + ".type", type + " is not a supported normalizer");
  }

  Status ParsePreTokenizer(const element& e, const std::string& path, std::vector<tk::PreTokenizerStage>* stages) {
    TF_ASSIGN_OR_RETURN(std::string type, GetType(e, path));
    object o;
    if (e.get(o)) return Error(path, "not a JSON object");
    if (type == "Sequence") {
      array arr;
      if (o["pretokenizers"].get(arr)) return Error(path + ".pretokenizers", "missing or not an array");
      size_t i = 0;
      for (element child : arr) {
        TF_RETURN_IF_ERROR(ParsePreTokenizer(child, path + ".pretokenizers[" + std::to_string(i++) + "]", stages));
      }
      return Status::OK();
    }
    tk::PreTokenizerStage st;
    if (type == "Split") {
      st.kind = tk::PreTokenizerStage::Kind::kSplit;
      TF_ASSIGN_OR_RETURN(st.matcher, ParsePattern(o, path));
      TF_ASSIGN_OR_RETURN(std::string behavior, GetString(o, "behavior", path));
      if (behavior == "Removed") st.behavior = tk::SplitBehavior::kRemoved;
      else if (behavior == "Isolated") st.behavior = tk::SplitBehavior::kIsolated;
      else if (behavior == "MergedWithPrevious") st.behavior = tk::SplitBehavior::kMergedWithPrevious;
      else if (behavior == "MergedWithNext") st.behavior = tk::SplitBehavior::kMergedWithNext;
      else if (behavior == "Contiguous") st.behavior = tk::SplitBehavior::kContiguous;
      else return Error(path + ".behavior", "unknown split behavior '" + behavior + "'");
      TF_ASSIGN_OR_RETURN(st.invert, GetBool(o, "invert", path, false));
    } else if (type == "Digits") {
      st.kind = tk::PreTokenizerStage::Kind::kDigits;
      TF_ASSIGN_OR_RETURN(st.individual_digits, GetBool(o, "individual_digits", path, false));
    } else if (type == "ByteLevel") {
      st.kind = tk::PreTokenizerStage::Kind::kByteLevel;
      TF_ASSIGN_OR_RETURN(st.add_prefix_space, GetBool(o, "add_prefix_space", path, true));
      TF_ASSIGN_OR_RETURN(bool use_regex, GetBool(o, "use_regex", path, true));
      if (use_regex) {
        auto m = tk::MakeSplitMatcher(tk::kByteLevelPattern, options_.fast_pretokenizers,
                                      origin_ + ": " + path + " (ByteLevel regex)");
        if (!m.ok()) return m.status().WithContext(origin_ + ": " + path);
        st.matcher = std::move(m).value();
      }
    } else if (type == "Metaspace") {
      st.kind = tk::PreTokenizerStage::Kind::kMetaspace;
      metaspace_paths_[stages->size()] = path;
      TF_ASSIGN_OR_RETURN(st.replacement, GetReplacement(o, path));
      TF_ASSIGN_OR_RETURN(st.prepend, GetPrependScheme(o, path));
      TF_ASSIGN_OR_RETURN(st.split, GetBool(o, "split", path, true));
    } else {
      return Unsupported(path + ".type", type + " is not a supported pre-tokenizer");
    }
    stages->push_back(std::move(st));
    return Status::OK();
  }

  // Every id the post-processor adds must be a token the tokenizer has (in
  // the vocabulary or added), or encoding would emit ids beyond id_limit().
  Status CheckPostProcessorIds(const tk::PostProcessorSpec& post, const tk::BpeModel& model,
                               const std::vector<tk::AddedTokenSpec>& added) const {
    auto known = [&](uint32_t id) {
      if (model.HasId(id)) return true;
      for (const tk::AddedTokenSpec& t : added) {
        if (t.id == id) return true;
      }
      return false;
    };
    for (const std::vector<uint32_t>* ids : {&post.prefix, &post.suffix}) {
      for (uint32_t id : *ids) {
        if (!known(id)) {
          return Error("post_processor", "adds token id " + std::to_string(id) +
                                             ", which is neither in model.vocab nor an added token");
        }
      }
    }
    return Status::OK();
  }

  Status ParsePostProcessor(const element& e, const std::string& path, const tk::BpeModel& model,
                            const std::vector<tk::AddedTokenSpec>& added, tk::PostProcessorSpec* post) {
    TF_ASSIGN_OR_RETURN(std::string type, GetType(e, path));
    object o;
    if (e.get(o)) return Error(path, "not a JSON object");
    if (type == "ByteLevel") {
      if (post->description == "none") post->description = "ByteLevel";
      return Status::OK();
    }
    if (type == "Sequence") {
      array arr;
      if (o["processors"].get(arr)) return Error(path + ".processors", "missing or not an array");
      size_t i = 0;
      for (element child : arr) {
        TF_RETURN_IF_ERROR(
            ParsePostProcessor(child, path + ".processors[" + std::to_string(i++) + "]", model, added, post));
      }
      return Status::OK();
    }
    if (type == "TemplateProcessing") {
      object specials;
      if (o["special_tokens"].get(specials)) return Error(path + ".special_tokens", "missing or not an object");
      array single;
      if (o["single"].get(single)) return Error(path + ".single", "missing or not an array");
      bool seen_sequence = false;
      std::vector<uint32_t> prefix, suffix;
      size_t i = 0;
      for (element piece : single) {
        std::string ppath = path + ".single[" + std::to_string(i++) + "]";
        object po;
        if (piece.get(po)) return Error(ppath, "not an object");
        object inner;
        std::string_view id;
        if (!po["Sequence"].get(inner)) {
          if (seen_sequence) return Unsupported(ppath, "a template with the sequence twice");
          seen_sequence = true;
          continue;
        }
        if (po["SpecialToken"].get(inner) || inner["id"].get(id)) {
          return Error(ppath, "neither {\"Sequence\": ...} nor {\"SpecialToken\": {\"id\": ...}}");
        }
        object tok;
        array ids;
        if (specials[id].get(tok) || tok["ids"].get(ids)) {
          return Error(path + ".special_tokens", "no entry with ids for '" + std::string(id) + "'");
        }
        for (element v : ids) {
          uint64_t x;
          if (v.get(x) || x >= UINT32_MAX) return Error(path + ".special_tokens." + std::string(id), "bad id");
          (seen_sequence ? suffix : prefix).push_back(static_cast<uint32_t>(x));
        }
      }
      post->prefix.insert(post->prefix.end(), prefix.begin(), prefix.end());
      post->suffix.insert(post->suffix.end(), suffix.begin(), suffix.end());
      post->description = "TemplateProcessing";
      return Status::OK();
    }
    if (type == "RobertaProcessing" || type == "BertProcessing") {
      array cls, sep;
      std::string_view cls_token, sep_token;
      if (o["cls"].get(cls) || cls.size() != 2 || cls.at(0).get(cls_token) || o["sep"].get(sep) ||
          sep.size() != 2 || sep.at(0).get(sep_token)) {
        return Error(path, "cls and sep must be [token, id] pairs");
      }
      uint64_t cls_id, sep_id;
      if (cls.at(1).get(cls_id) || sep.at(1).get(sep_id) || cls_id >= UINT32_MAX || sep_id >= UINT32_MAX) {
        return Error(path, "cls and sep ids must be token ids (integers below 2^32-1)");
      }
      post->prefix.push_back(static_cast<uint32_t>(cls_id));
      post->suffix.push_back(static_cast<uint32_t>(sep_id));
      post->description = type;
      return Status::OK();
    }
    return Unsupported(path + ".type", type + " is not a supported post-processor");
  }

  // Metaspace's replacement: exactly one character, as the reference reads it.
  Result<std::string> GetReplacement(const object& o, const std::string& path) const {
    TF_ASSIGN_OR_RETURN(std::string rep, GetString(o, "replacement", path));
    if (rep.empty() || !IsValidUtf8(rep) || CharCount(rep) != 1) {
      return Error(path + ".replacement", "must be exactly one character, not \"" + rep + "\"");
    }
    return rep;
  }
  // prepend_scheme ("always", "first", "never"; absent: always). The older
  // add_prefix_space may stand beside it, but false only with "never".
  Result<tk::PrependScheme> GetPrependScheme(const object& o, const std::string& path) const {
    tk::PrependScheme scheme = tk::PrependScheme::kAlways;
    element e;
    if (!o["prepend_scheme"].get(e) && !IsNull(e)) {
      std::string_view v;
      if (e.get(v)) return Error(path + ".prepend_scheme", "not a string");
      if (v == "always") scheme = tk::PrependScheme::kAlways;
      else if (v == "first") scheme = tk::PrependScheme::kFirst;
      else if (v == "never") scheme = tk::PrependScheme::kNever;
      else return Error(path + ".prepend_scheme", "'" + std::string(v) + "' is not always, first or never");
    }
    TF_ASSIGN_OR_RETURN(bool add_prefix_space, GetBool(o, "add_prefix_space", path, true));
    if (!add_prefix_space && scheme != tk::PrependScheme::kNever) {
      return Error(path + ".add_prefix_space", "false contradicts prepend_scheme (absent means \"always\")");
    }
    return scheme;
  }
  Result<size_t> GetCount(const object& o, std::string_view key, const std::string& path) const {
    uint64_t v;
    if (o[key].get(v)) return Error(path + "." + std::string(key), "missing or not a non-negative integer");
    return static_cast<size_t>(v);
  }
  static size_t CharCount(std::string_view s) {
    size_t n = 0;
    for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
  }

  // Appends the steps of the decoder at `path`; an error names the first
  // step this build cannot run (the tokenizer then loads without decoding).
  Status ParseDecoder(const element& e, const std::string& path, std::vector<tk::DecoderStep>* steps,
                      std::string* name) {
    TF_ASSIGN_OR_RETURN(std::string type, GetType(e, path));
    object o;
    if (e.get(o)) return Error(path, "not a JSON object");
    if (name->empty() || *name == "none") *name = type;
    if (type == "Sequence") {
      array arr;
      if (o["decoders"].get(arr)) return Error(path + ".decoders", "missing or not an array");
      size_t i = 0;
      for (element child : arr) {
        TF_RETURN_IF_ERROR(ParseDecoder(child, path + ".decoders[" + std::to_string(i++) + "]", steps, name));
      }
      return Status::OK();
    }
    tk::DecoderStep step;
    if (type == "ByteLevel") {
      step.kind = tk::DecoderStep::Kind::kByteLevel;
    } else if (type == "ByteFallback") {
      step.kind = tk::DecoderStep::Kind::kByteFallback;
    } else if (type == "Fuse") {
      step.kind = tk::DecoderStep::Kind::kFuse;
    } else if (type == "Replace") {
      step.kind = tk::DecoderStep::Kind::kReplace;
      TF_ASSIGN_OR_RETURN(auto pattern, ParsePattern(o, path));
      step.pattern = std::move(pattern);
      TF_ASSIGN_OR_RETURN(step.content, GetString(o, "content", path));
    } else if (type == "Strip") {
      step.kind = tk::DecoderStep::Kind::kStrip;
      TF_ASSIGN_OR_RETURN(std::string content, GetString(o, "content", path));
      if (content.empty() || !IsValidUtf8(content) || CharCount(content) != 1) {
        return Error(path + ".content", "must be exactly one character");
      }
      step.strip_char = FirstChar(content);
      TF_ASSIGN_OR_RETURN(step.start, GetCount(o, "start", path));
      TF_ASSIGN_OR_RETURN(step.stop, GetCount(o, "stop", path));
    } else if (type == "Metaspace") {
      step.kind = tk::DecoderStep::Kind::kMetaspace;
      TF_ASSIGN_OR_RETURN(std::string rep, GetReplacement(o, path));
      step.strip_char = FirstChar(rep);
      TF_ASSIGN_OR_RETURN(tk::PrependScheme scheme, GetPrependScheme(o, path));
      step.prepend_never = scheme == tk::PrependScheme::kNever;
    } else {
      *name = type;
      return Unsupported(path + ".type", "decoder '" + type + "' is not supported; encoding works");
    }
    steps->push_back(std::move(step));
    return Status::OK();
  }
  static char32_t FirstChar(std::string_view s) {
    char32_t c = 0;
    tk::unicode::DecodeUtf8(reinterpret_cast<const uint8_t*>(s.data()),
                            reinterpret_cast<const uint8_t*>(s.data()) + s.size(),
                        &c);
    return c;
  }

  std::string origin_;
  TokenizerOptions options_;
  // The JSON path of the first normalizer step that can remove the text's
  // first characters (Strip from the left, Replace with nothing), if any.
  std::string start_dropping_normalizer_;
  std::map<size_t, std::string> metaspace_paths_;  // by pre-tokenizer stage index
};

}  // namespace

Result<std::shared_ptr<const Tokenizer>> Tokenizer::FromJson(std::string_view json, std::string_view origin,
                                                              const TokenizerOptions& options) {
  // The cache keeps 32-bit offsets into its arenas: 2^26 pieces of up to
  // 96 bytes and their ids stay far below 2^32.
  constexpr size_t kMaxWordCacheEntries = size_t{1} << 26;
  if (options.word_cache_entries == 0 || options.word_cache_entries > kMaxWordCacheEntries) {
    return Status::InvalidArgument("tokenizer option word_cache_entries must be 1 to " +
                                   std::to_string(kMaxWordCacheEntries) + ", got " +
                                   std::to_string(options.word_cache_entries));
  }
  return TokenizerJsonParser(origin, options).Load(json);
}

Result<std::shared_ptr<const Tokenizer>> Tokenizer::FromFile(const std::string& path,
                                                              const TokenizerOptions& options) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status::FromErrno(errno, "cannot open tokenizer file", path);
  std::string data;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) data.append(buf, n);
  bool failed = std::ferror(f);
  std::fclose(f);
  if (failed) return Status::IoError("cannot read tokenizer file '" + path + "'");
  return FromJson(data, path, options);
}

}  // namespace tokenfeed
