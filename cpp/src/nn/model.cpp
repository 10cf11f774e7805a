// Model: loading from safetensors and the forward pass.
#include "posenc/nn/model.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <utility>

#include "io/json_header.hpp"
#include "io/pointer_sort.hpp"
#include "nn/tensor_check.hpp"
#include "posenc/io/safetensors.hpp"
#include "posenc/sinusoidal/presets.hpp"

namespace posenc {

namespace {

// Words of a space-separated metadata string (runs of spaces count as one separator).
std::int64_t word_count(const std::string& s) {
  std::int64_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s[i] != ' ' && (i == 0 || s[i - 1] == ' ')) ++n;
  return n;
}

LayerError bad_metadata(const char* key) {
  return layer_error(LayerStatus::invalid_metadata, std::string("__metadata__.") + key);
}

bool parse_int(const std::string& s, std::int64_t lo, std::int64_t hi, std::int64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  std::int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v < lo || v > hi) return false;
  *out = v;
  return true;
}

// A decimal number ("1e-05", "5.656854249492381", "-0.5"): digits, optional fraction and
// exponent. Not strtod, which would pull long-double arithmetic into the wasm (about 12 KB);
// exact for up to 15 significant digits and |exponent| <= 22 (then one correctly rounded
// multiply or divide by an exact power of ten), within an ulp or two otherwise.
bool parse_double(const std::string& s, double* out) {
  std::size_t i = 0;
  const bool negative = i < s.size() && s[i] == '-';
  if (negative || (i < s.size() && s[i] == '+')) ++i;
  double mantissa = 0.0;
  int digits = 0, exponent = 0;
  bool any = false;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, any = true) {
    if (digits < 17) {
      mantissa = mantissa * 10.0 + (s[i] - '0');
      if (mantissa > 0.0) ++digits;
    } else {
      ++exponent;
    }
  }
  if (i < s.size() && s[i] == '.') {
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, any = true) {
      if (digits < 17) {
        mantissa = mantissa * 10.0 + (s[i] - '0');
        if (mantissa > 0.0) ++digits;
        --exponent;
      }
    }
  }
  if (!any) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    const bool negative_exponent = i < s.size() && s[i] == '-';
    if (negative_exponent || (i < s.size() && s[i] == '+')) ++i;
    int e = 0;
    bool exponent_digits = false;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, exponent_digits = true)
      if (e < 10000) e = e * 10 + (s[i] - '0');
    if (!exponent_digits) return false;
    exponent += negative_exponent ? -e : e;
  }
  if (i != s.size()) return false;
  double power = 1.0;
  // Up to infinity: 1e999 overflows (and is refused below) rather than stopping at 1e301.
  for (int k = exponent < 0 ? -exponent : exponent; k > 0 && std::isfinite(power); --k)
    power *= 10.0;
  double v = mantissa == 0.0 ? 0.0 : exponent < 0 ? mantissa / power : mantissa * power;
  if (!std::isfinite(v)) return false;
  *out = negative ? -v : v;
  return true;
}

// Reads a tensor of the expected shape into a fresh buffer.
LayerError read_tensor(const SafetensorsFile& file, const std::string& name,
                       std::initializer_list<std::int64_t> shape, FloatBuffer* out) {
  const TensorInfo* t = file.find(name);
  if (t == nullptr) return layer_error(LayerStatus::missing_tensor, name);
  if (t->shape.size() != shape.size()) return layer_error(LayerStatus::wrong_shape, name);
  std::size_t i = 0;
  for (std::int64_t s : shape)
    if (t->shape[i++] != s) return layer_error(LayerStatus::wrong_shape, name);
  if (!out->resize(t->elements)) return layer_error(LayerStatus::out_of_memory, name);
  if (LayerError e = file.read_f32(*t, out->data(), t->elements); !e.ok()) return e;
  const std::size_t columns = shape.size() == 2 ? static_cast<std::size_t>(t->shape[1]) : 0;
  const std::string non_finite = detail::first_non_finite(name, out->data(), t->elements, columns);
  if (!non_finite.empty()) return layer_error(LayerStatus::non_finite, non_finite);
  return {};
}

// What a failed validate() of the layer config derived from the file is about: the metadata key
// or the tensor the value came from.
LayerError config_error(const LayerError& e) {
  if (e.name == "heads") return bad_metadata("heads");
  if (e.name == "layerNormEps") return bad_metadata("layer_norm_eps");
  if (e.name == "activation") return bad_metadata("activation");
  if (e.name == "ropeTheta") return bad_metadata("rope_theta");
  if (e.name == "rotaryDim") return bad_metadata("partial_rotary_factor");
  if (e.name == "rotaryLayout") return bad_metadata("rotary_layout");
  if (e.name == "alibiMode") return bad_metadata("alibi_mode");
  if (e.name == "ffDim") return layer_error(LayerStatus::wrong_shape, "layers.0.linear1.weight");
  return layer_error(LayerStatus::wrong_shape, "embedding.weight");  // dModel
}

// The position step's keys (read and checked whether or not the model uses them: a file with a
// bad value is a bad file). partial_rotary_factor becomes the layer's rotary_dim once d is known.
LayerError read_position_metadata(const SafetensorsFile& file, ModelConfig* c,
                                  double* partial_rotary_factor) {
  PositionConfig& p = c->layer.position;
  if (c->positional_encoding == "rotary") p.method = PositionMethod::rotary;
  if (c->positional_encoding == "alibi") p.method = PositionMethod::alibi;
  if (const std::string* v = file.metadata("rope_theta"))
    if (!parse_double(*v, &p.rope_theta) || !(p.rope_theta > 1.0))
      return bad_metadata("rope_theta");
  *partial_rotary_factor = 1.0;
  if (const std::string* v = file.metadata("partial_rotary_factor"))
    if (!parse_double(*v, partial_rotary_factor) || !(*partial_rotary_factor > 0.0) ||
        *partial_rotary_factor > 1.0)
      return bad_metadata("partial_rotary_factor");
  if (const std::string* v = file.metadata("rotary_layout")) {
    if (*v != "half" && *v != "interleaved") return bad_metadata("rotary_layout");
    p.rotary_layout = *v == "half" ? RotaryLayout::half : RotaryLayout::interleaved;
  }
  if (const std::string* v = file.metadata("rope_scaling")) {
    detail::JsonValue scaling;
    if (!detail::parse_json(v->data(), v->size(), &scaling)) return bad_metadata("rope_scaling");
    if (scaling.type != detail::JsonValue::Type::null)  // HF's linear, dynamic, yarn, llama3...
      return layer_error(LayerStatus::unsupported_metadata, "__metadata__.rope_scaling");
  }
  if (const std::string* v = file.metadata("alibi_mode")) {
    if (*v != "causal" && *v != "symmetric") return bad_metadata("alibi_mode");
    p.alibi_mode = *v == "causal" ? AlibiMode::causal : AlibiMode::symmetric;
  }
  // The experiment's description (tests/fixtures/extrapolation), kept for display; its strings
  // are copied once the whole file has loaded (Model::load's end), so a failed load allocates
  // nothing for them.
  if (const std::string* v = file.metadata("copy_distance"))
    if (!parse_int(*v, 0, kMaxSequenceLength, &c->copy_distance))
      return bad_metadata("copy_distance");
  if (const std::string* v = file.metadata("train_max_length"))
    if (!parse_int(*v, 1, kMaxSequenceLength, &c->train_max_length))
      return bad_metadata("train_max_length");
  return {};
}

// The names of every tensor a model with num_layers layers has, sorted.
std::vector<std::string> model_tensor_names(std::int64_t num_layers) {
  std::vector<std::string> names = {"embedding.weight", "head.weight", "head.bias"};
  for (std::int64_t i = 0; i < num_layers; ++i)
    for (const char* short_name : kLayerTensorNames)
      names.push_back("layers." + integer_text(static_cast<std::int64_t>(i)) + "." + short_name);
  std::vector<const void*> order;
  order.reserve(names.size());
  for (const std::string& name : names)
    order.push_back(&name);
  detail::sort_pointers(order.data(), order.size(), detail::string_less);
  std::vector<std::string> sorted;
  sorted.reserve(names.size());
  for (const void* name : order)
    sorted.push_back(std::move(*const_cast<std::string*>(static_cast<const std::string*>(name))));
  return sorted;
}

}  // namespace

LayerError Model::load(const std::uint8_t* bytes, std::size_t size) {
  SafetensorsFile file;
  if (LayerError e = file.parse(bytes, size); !e.ok()) return e;

  Model m;
  ModelConfig& c = m.config_;
  const std::string* heads = file.metadata("heads");
  const std::string* num_layers = file.metadata("num_layers");
  const std::string* pe = file.metadata("positional_encoding");
  if (heads == nullptr || !parse_int(*heads, 1, kMaxHeads, &c.layer.heads))
    return bad_metadata("heads");
  if (num_layers == nullptr || !parse_int(*num_layers, 1, kMaxModelLayers, &c.num_layers))
    return bad_metadata("num_layers");
  if (pe == nullptr) return bad_metadata("positional_encoding");
  c.positional_encoding = *pe;
  if (const std::string* v = file.metadata("norm_first")) {
    if (*v != "true" && *v != "false") return bad_metadata("norm_first");
    c.layer.norm_first = *v == "true";
  }
  if (const std::string* v = file.metadata("activation")) {
    if (*v != "relu" && *v != "gelu") return bad_metadata("activation");
    c.layer.activation = *v == "gelu" ? Activation::gelu : Activation::relu;
  }
  if (const std::string* v = file.metadata("layer_norm_eps"))
    if (!parse_double(*v, &c.layer.layer_norm_eps)) return bad_metadata("layer_norm_eps");
  if (const std::string* v = file.metadata("vocab")) c.vocab = *v;
  if (const std::string* v = file.metadata("labels")) c.labels = *v;
  double partial_rotary_factor = 1.0;
  if (LayerError e = read_position_metadata(file, &c, &partial_rotary_factor); !e.ok()) return e;

  // Shapes give d, vocab, ff and classes.
  const TensorInfo* emb = file.find("embedding.weight");
  if (emb == nullptr) return layer_error(LayerStatus::missing_tensor, "embedding.weight");
  if (emb->shape.size() != 2 || emb->shape[0] < 1 || emb->shape[1] < 1 ||
      emb->shape[1] > kMaxModelDim || emb->shape[0] > std::numeric_limits<std::int32_t>::max())
    return layer_error(LayerStatus::wrong_shape, "embedding.weight");
  c.vocab_size = emb->shape[0];
  c.layer.d_model = emb->shape[1];
  const std::int64_t d = c.layer.d_model;
  const TensorInfo* l1 = file.find("layers.0.linear1.weight");
  if (l1 == nullptr) return layer_error(LayerStatus::missing_tensor, "layers.0.linear1.weight");
  if (l1->shape.size() != 2)
    return layer_error(LayerStatus::wrong_shape, "layers.0.linear1.weight");
  c.layer.ff_dim = l1->shape[0];
  const TensorInfo* hw = file.find("head.weight");
  if (hw == nullptr) return layer_error(LayerStatus::missing_tensor, "head.weight");
  if (hw->shape.size() != 2 || hw->shape[0] < 1 || hw->shape[0] > 65536)
    return layer_error(LayerStatus::wrong_shape, "head.weight");
  c.num_classes = hw->shape[0];
  // The display words, when given, name every token and every class: one word per row.
  if (!c.vocab.empty() && word_count(c.vocab) != c.vocab_size) return bad_metadata("vocab");
  if (!c.labels.empty() && word_count(c.labels) != c.num_classes) return bad_metadata("labels");
  if (c.layer.position.method == PositionMethod::rotary && c.layer.heads > 0 &&
      d % c.layer.heads == 0) {  // Python's int(head_dim * partial_rotary_factor)
    c.layer.position.rotary_dim =
        static_cast<std::int64_t>(static_cast<double>(d / c.layer.heads) * partial_rotary_factor);
    // 0 would read as the layer's "whole head": a factor that rotates no pair is a bad file.
    if (c.layer.position.rotary_dim < 2) return bad_metadata("partial_rotary_factor");
  }
  if (LayerError e = validate(c.layer); !e.ok()) return config_error(e);

  c.embedding_scale = std::sqrt(static_cast<double>(d));
  if (const std::string* v = file.metadata("embedding_scale"))
    if (!parse_double(*v, &c.embedding_scale) || std::fabs(c.embedding_scale) > FLT_MAX)
      return bad_metadata("embedding_scale");  // forward multiplies by it as a float32

  if (c.layer.position.method == PositionMethod::none && c.positional_encoding != "none") {
    Preset preset;
    if (!preset_from_name(c.positional_encoding, &preset))
      return bad_metadata("positional_encoding");
    m.encoder_.reset(new (std::nothrow) SinusoidalEncoder(preset_spec(preset, d)));
    if (!m.encoder_) return layer_error(LayerStatus::out_of_memory, "positional_encoding");
    if (m.encoder_->status() != Status::ok) return bad_metadata("positional_encoding");
    m.first_position_ = preset_first_position(preset, kFairseqDefaultPaddingIdx);
    if (preset_info(preset).uses_padding_idx)
      m.zero_position_ = static_cast<double>(kFairseqDefaultPaddingIdx);
  }

  std::size_t used = 0;
  if (LayerError e = read_tensor(file, "embedding.weight", {c.vocab_size, d}, &m.embedding_);
      !e.ok())
    return e;
  ++used;
  FloatBuffer tmp;
  if (LayerError e = read_tensor(file, "head.weight", {c.num_classes, d}, &tmp); !e.ok()) return e;
  if (!m.head_.pack_transposed(tmp.data(), c.num_classes, d, d))
    return layer_error(LayerStatus::out_of_memory, "head.weight");
  if (LayerError e = read_tensor(file, "head.bias", {c.num_classes}, &m.head_bias_); !e.ok())
    return e;
  used += 2;

  m.layers_.resize(static_cast<std::size_t>(c.num_layers));
  for (std::int64_t i = 0; i < c.num_layers; ++i) {
    TransformerEncoderLayer& layer = m.layers_[static_cast<std::size_t>(i)];
    if (LayerError e = layer.configure(c.layer); !e.ok()) return e;
    const std::string prefix = "layers." + integer_text(static_cast<std::int64_t>(i)) + ".";
    for (const char* short_name : kLayerTensorNames) {
      const std::string name = prefix + short_name;
      const TensorInfo* t = file.find(name);
      if (t == nullptr) return layer_error(LayerStatus::missing_tensor, name);
      if (!tmp.resize(t->elements)) return layer_error(LayerStatus::out_of_memory, name);
      if (LayerError e = file.read_f32(*t, tmp.data(), t->elements); !e.ok()) return e;
      LayerError e = layer.set_tensor(short_name, tmp.data(), t->elements, t->shape.data(),
                                      static_cast<int>(t->shape.size()));
      if (!e.ok()) return layer_error(e.status, prefix + e.name);  // e.name: short_name[...]
      ++used;
    }
  }
  if (used != file.tensors().size()) {
    // Name the first tensor the model does not use.
    const std::vector<std::string> known = model_tensor_names(c.num_layers);
    for (const TensorInfo& t : file.tensors())
      if (!std::binary_search(known.begin(), known.end(), t.name))
        return layer_error(LayerStatus::unknown_tensor, t.name);
  }
  if (const std::string* v = file.metadata("task")) c.task = *v;
  if (const std::string* v = file.metadata("symbols")) c.symbols = *v;
  *this = std::move(m);
  return {};
}

LayerError Model::forward(const std::int32_t* tokens, std::int64_t length,
                          const ModelForwardOptions& options, float* logits,
                          std::size_t logits_len) {
  if (!loaded()) return layer_error(LayerStatus::not_ready, "model");
  if (length < 1 || length > kMaxSequenceLength)
    return layer_error(LayerStatus::invalid_length, "length");
  if (tokens == nullptr) return layer_error(LayerStatus::size_mismatch, "tokens");
  for (std::int64_t i = 0; i < length; ++i)
    if (tokens[i] < 0 || tokens[i] >= config_.vocab_size)
      return layer_error(LayerStatus::invalid_token,
                         "tokens[" + integer_text(static_cast<std::int64_t>(i)) + "]");
  const std::int64_t d = config_.layer.d_model;
  const std::size_t n = static_cast<std::size_t>(length * d);
  if (logits == nullptr || logits_len != static_cast<std::size_t>(length * config_.num_classes))
    return layer_error(LayerStatus::size_mismatch, "logits");
  const double offset = options.position_offset;
  if (!(offset >= 0.0) || offset + static_cast<double>(length - 1) > kMaxLayerPosition)
    return layer_error(LayerStatus::invalid_position, "positionOffset");
  if (!hidden_.reserve(n)) return layer_error(LayerStatus::out_of_memory, "length");

  float* h = hidden_.data();
  const float scale = static_cast<float>(config_.embedding_scale);
  for (std::int64_t i = 0; i < length; ++i)
    std::memcpy(h + i * d, embedding_.data() + static_cast<std::int64_t>(tokens[i]) * d,
                static_cast<std::size_t>(d) * sizeof(float));
  if (encoder_ && options.positional_encoding) {
    RowPositions rows;
    rows.count = length;
    rows.first_position = first_position_ + offset;
    rows.zero_position = zero_position_;
    // The preset's first position (fairseq's paddingIdx + 1, OpenNMT-tf's 1) adds to the offset:
    // near 2^31 - 1 the rows can pass the encoder's last position.
    const Status s = encoder_->add_to(rows, scale, h, n, nullptr, options.pool);
    if (s == Status::invalid_position)
      return layer_error(LayerStatus::invalid_position, "positionOffset");
    if (s != Status::ok) return layer_error(LayerStatus::out_of_memory, "length");
  } else {
    for (std::size_t i = 0; i < n; ++i)
      h[i] = h[i] * scale;
  }
  ForwardOptions layer_options;
  layer_options.causal = options.causal;
  layer_options.key_padding_mask = options.key_padding_mask;
  layer_options.position_offset = offset;
  layer_options.position_step = options.positional_encoding;
  layer_options.pool = options.pool;
  for (TransformerEncoderLayer& layer : layers_)
    if (LayerError e = layer.forward(h, n, length, layer_options, h, n); !e.ok()) return e;
  gemm(h, d, length, head_, head_bias_.data(), Epilogue::none, logits, config_.num_classes,
       options.pool);
  return {};
}

std::int64_t Model::attention_length() const {
  if (layers_.empty()) return 0;
  const std::int64_t length = layers_[0].attention_length();
  for (const TransformerEncoderLayer& layer : layers_)
    if (layer.attention_length() != length) return 0;
  return length;
}

const float* Model::attention(std::int64_t layer) const {
  if (layer < 0 || layer >= static_cast<std::int64_t>(layers_.size()) || attention_length() == 0)
    return nullptr;
  return layers_[static_cast<std::size_t>(layer)].attention();
}

}  // namespace posenc
