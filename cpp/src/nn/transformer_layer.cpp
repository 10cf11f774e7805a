// TransformerEncoderLayer: weights by state_dict name, the forward pass, masks and softmax.
#include "posenc/nn/transformer_layer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "hot_entry.hpp"
#include "nn/tensor_check.hpp"

namespace posenc {

const char* const kLayerTensorNames[kLayerTensorCount] = {
    "self_attn.in_proj_weight",
    "self_attn.in_proj_bias",
    "self_attn.out_proj.weight",
    "self_attn.out_proj.bias",
    "linear1.weight",
    "linear1.bias",
    "linear2.weight",
    "linear2.bias",
    "norm1.weight",
    "norm1.bias",
    "norm2.weight",
    "norm2.bias",
};

LayerTensorShape layer_tensor_shape(const LayerConfig& c, int index) {
  const std::int64_t d = c.d_model, f = c.ff_dim;
  switch (index) {
    case 0:
      return {{3 * d, d}, 2, "3 dModel x dModel"};
    case 1:
      return {{3 * d, 0}, 1, "3 dModel"};
    case 2:
      return {{d, d}, 2, "dModel x dModel"};
    case 4:
      return {{f, d}, 2, "ffDim x dModel"};
    case 5:
      return {{f, 0}, 1, "ffDim"};
    case 6:
      return {{d, f}, 2, "dModel x ffDim"};
    default:
      return {{d, 0}, 1, "dModel"};
  }
}

namespace {

int tensor_index(std::string_view name) {
  for (int i = 0; i < kLayerTensorCount; ++i)
    if (name == kLayerTensorNames[i]) return i;
  return -1;
}

bool copy_to(FloatBuffer& target, const float* data, std::size_t count) {
  FloatBuffer fresh;
  if (!fresh.resize(count)) return false;
  std::memcpy(fresh.data(), data, count * sizeof(float));
  target = std::move(fresh);
  return true;
}

}  // namespace

POSENC_SMALL LayerError validate(const LayerConfig& c) {
  if (c.d_model < 1 || c.d_model > kMaxModelDim)
    return layer_error(LayerStatus::invalid_config, "dModel");
  if (c.heads < 1 || c.heads > kMaxHeads || c.d_model % c.heads != 0)
    return layer_error(LayerStatus::invalid_config, "heads");
  if (c.ff_dim < 1 || c.ff_dim > kMaxFfDim)
    return layer_error(LayerStatus::invalid_config, "ffDim");
  if (c.activation != Activation::relu && c.activation != Activation::gelu)
    return layer_error(LayerStatus::invalid_config, "activation");
  if (!std::isfinite(c.layer_norm_eps) || c.layer_norm_eps < 0.0)
    return layer_error(LayerStatus::invalid_config, "layerNormEps");
  const PositionConfig& p = c.position;
  switch (p.method) {
    case PositionMethod::none:
      return {};
    case PositionMethod::rotary: {
      if (!(p.rope_theta > 1.0) || !std::isfinite(p.rope_theta))
        return layer_error(LayerStatus::invalid_config, "ropeTheta");
      const std::int64_t head_dim = c.d_model / c.heads;
      const std::int64_t r = p.rotary_dim == 0 ? head_dim : p.rotary_dim;
      if (r < 2 || r > head_dim || r % 2 != 0)
        return layer_error(LayerStatus::invalid_config, "rotaryDim");
      if (p.rotary_layout != RotaryLayout::half && p.rotary_layout != RotaryLayout::interleaved)
        return layer_error(LayerStatus::invalid_config, "rotaryLayout");
      return {};
    }
    case PositionMethod::alibi:
      if (p.alibi_mode != AlibiMode::causal && p.alibi_mode != AlibiMode::symmetric)
        return layer_error(LayerStatus::invalid_config, "alibiMode");
      return {};
  }
  return layer_error(LayerStatus::invalid_config, "position");
}

POSENC_SMALL LayerError TransformerEncoderLayer::configure(const LayerConfig& config) {
  if (LayerError e = validate(config); !e.ok()) return e;
  Buffer<double> slopes;  // ALiBi only: a plain layer stays as small as it was
  if (config.position.method == PositionMethod::alibi) {
    if (!slopes.resize(static_cast<std::size_t>(config.heads)))
      return layer_error(LayerStatus::out_of_memory, "heads");
    alibi_slopes(config.heads, slopes.data(), slopes.size());  // heads was validated
  }
  Buffer<double> frequencies;  // rotary only: the rotary family's float64 frequencies, once
  if (config.position.method == PositionMethod::rotary) {
    const std::int64_t head_dim = config.d_model / config.heads;
    const std::int64_t r = config.position.rotary_dim == 0 ? head_dim : config.position.rotary_dim;
    if (!frequencies.resize(static_cast<std::size_t>(r / 2)) ||
        !rotary_frequencies_of(config.position.rope_theta, r, frequencies.data()))
      return layer_error(LayerStatus::out_of_memory, "rotaryDim");  // validated above
  }
  alibi_slopes_ = std::move(slopes);
  rotary_frequencies_ = std::move(frequencies);
  config_ = config;
  configured_ = true;
  release_workspace();  // its buffers are sized for the old dModel, ffDim, heads and step
  for (bool& s : set_)
    s = false;
  has_attention_ = false;
  return {};
}

POSENC_SMALL LayerError TransformerEncoderLayer::set_tensor(std::string_view name,
                                                            const float* data, std::size_t count,
                                                            const std::int64_t* shape, int ndim) {
  const int index = tensor_index(name);
  if (index < 0) return layer_error(LayerStatus::unknown_tensor, std::string(name));
  if (!configured_) return layer_error(LayerStatus::not_ready, "config");
  const LayerTensorShape want = layer_tensor_shape(config_, index);
  std::size_t want_count = static_cast<std::size_t>(want.dims[0]);
  if (want.ndim == 2) want_count *= static_cast<std::size_t>(want.dims[1]);
  if (shape != nullptr) {
    if (ndim != want.ndim) return layer_error(LayerStatus::wrong_shape, std::string(name));
    for (int i = 0; i < ndim; ++i)
      if (shape[i] != want.dims[i]) return layer_error(LayerStatus::wrong_shape, std::string(name));
  }
  if (count != want_count || data == nullptr)
    return layer_error(LayerStatus::wrong_shape, std::string(name));
  const std::string non_finite = detail::first_non_finite(
      name, data, count, want.ndim == 2 ? static_cast<std::size_t>(want.dims[1]) : 0);
  if (!non_finite.empty()) return layer_error(LayerStatus::non_finite, non_finite);

  bool ok = true;
  if (want.ndim == 2) {
    PackedMatrix fresh;
    ok = fresh.pack_transposed(data, want.dims[0], want.dims[1], want.dims[1]);
    if (ok) {
      PackedMatrix* targets[] = {&in_proj_, nullptr, &out_proj_, nullptr,
                                 &linear1_, nullptr, &linear2_};
      *targets[index] = std::move(fresh);
    }
  } else {
    FloatBuffer* targets[] = {nullptr,        &in_proj_bias_, nullptr,        &out_proj_bias_,
                              nullptr,        &linear1_bias_, nullptr,        &linear2_bias_,
                              &norm1_weight_, &norm1_bias_,   &norm2_weight_, &norm2_bias_};
    ok = copy_to(*targets[index], data, count);
  }
  if (!ok) return layer_error(LayerStatus::out_of_memory, std::string(name));
  set_[index] = true;
  return {};
}

LayerError TransformerEncoderLayer::check_complete() const {
  if (!configured_) return layer_error(LayerStatus::not_ready, "config");
  for (int i = 0; i < kLayerTensorCount; ++i)
    if (!set_[i]) return layer_error(LayerStatus::missing_tensor, kLayerTensorNames[i]);
  return {};
}

LayerError TransformerEncoderLayer::ensure_workspace(std::int64_t length) {
  if (length <= capacity_) return {};
  const std::size_t l = static_cast<std::size_t>(length);
  const std::size_t d = static_cast<std::size_t>(config_.d_model);
  const std::size_t f = static_cast<std::size_t>(config_.ff_dim);
  const std::size_t h = static_cast<std::size_t>(config_.heads);
  // Sizes in floats, checked: in wasm32 heads x L x L alone can pass 2^32. A size no buffer can
  // have fails here, before anything is allocated.
  std::size_t l3d = 0, lf = 0, hl = 0, hll = 0;
  // Row positions only for a position step; ALiBi's distance table only for ALiBi.
  const bool step = config_.position.method != PositionMethod::none;
  const bool alibi = config_.position.method == PositionMethod::alibi;
  const bool fits = detail::checked_multiply(l, 3 * d, &l3d) &&
                    detail::checked_multiply(l, f, &lf) && detail::checked_multiply(h, l, &hl) &&
                    detail::checked_multiply(hl, l, &hll) && l3d <= FloatBuffer::kMaxSize &&
                    lf <= FloatBuffer::kMaxSize && hll <= FloatBuffer::kMaxSize;
  if (!fits || !x_.resize(l * d) || !normed_.resize(l * d) || !qkv_.resize(l3d) ||
      !heads_out_.resize(l * d) || !sublayer_.resize(l * d) || !hidden_.resize(lf) ||
      !probs_.resize(hll) || !key_order_.resize(2 * l) || !key_row_.resize(l) ||
      (step && !positions_.resize(2 * l)) || (alibi && !alibi_table_.resize(2 * l))) {
    release_workspace();
    return layer_error(LayerStatus::out_of_memory, "length");
  }
  capacity_ = length;
  return {};
}

POSENC_SMALL void TransformerEncoderLayer::release_workspace() {
  for (FloatBuffer* b :
       {&x_, &normed_, &qkv_, &heads_out_, &sublayer_, &hidden_, &probs_, &key_row_})
    *b = FloatBuffer();
  key_order_ = IndexBuffer();
  positions_ = Buffer<double>();
  alibi_table_ = FloatBuffer();
  keys_ = PackedMatrix();
  values_ = PackedMatrix();
  capacity_ = 0;
  has_attention_ = false;
}

void TransformerEncoderLayer::layer_norm(const float* x, const FloatBuffer& weight,
                                         const FloatBuffer& bias, std::int64_t rows,
                                         float* out) const {
  const std::int64_t d = config_.d_model;
  const float* w = weight.data();
  const float* b = bias.data();
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * d;
    double sum = 0.0;
    for (std::int64_t c = 0; c < d; ++c)
      sum += row[c];
    const double mean = sum / static_cast<double>(d);
    double squares = 0.0;
    for (std::int64_t c = 0; c < d; ++c) {
      const double t = row[c] - mean;
      squares += t * t;
    }
    const double var = squares / static_cast<double>(d);
    const double rstd = 1.0 / std::sqrt(var + config_.layer_norm_eps);
    float* o = out + r * d;
    for (std::int64_t c = 0; c < d; ++c)
      o[c] = static_cast<float>((row[c] - mean) * rstd) * w[c] + b[c];
  }
}

LayerError TransformerEncoderLayer::resolve_positions(std::int64_t length,
                                                      const ForwardOptions& options) {
  double* p = positions_.data();  // null without a position step: then only checked
  positions_consecutive_ = options.positions == nullptr;
  if (options.positions != nullptr) {
    for (std::int64_t i = 0; i < length; ++i) {
      if (!(std::fabs(options.positions[i]) <= kMaxLayerPosition))  // also NaN
        return layer_error(LayerStatus::invalid_position,
                           "positions[" + integer_text(static_cast<std::int64_t>(i)) + "]");
      if (p != nullptr) p[i] = options.positions[i];
    }
    return {};
  }
  const double first = options.position_offset;
  const double last = first + static_cast<double>(length - 1);
  if (!(std::fabs(first) <= kMaxLayerPosition) || !(std::fabs(last) <= kMaxLayerPosition))
    return layer_error(LayerStatus::invalid_position, "positionOffset");
  if (p != nullptr)
    for (std::int64_t i = 0; i < length; ++i)
      p[i] = first + static_cast<double>(i);
  return {};
}

LayerError TransformerEncoderLayer::forward(const float* x, std::size_t x_len, std::int64_t length,
                                            const ForwardOptions& options, float* out,
                                            std::size_t out_len) {
  if (LayerError e = check_complete(); !e.ok()) return layer_error(LayerStatus::not_ready, e.name);
  if (length < 1 || length > kMaxSequenceLength)
    return layer_error(LayerStatus::invalid_length, "length");
  const std::int64_t d = config_.d_model;
  const std::size_t n = static_cast<std::size_t>(length * d);
  if (x == nullptr || x_len != n) return layer_error(LayerStatus::size_mismatch, "x");
  if (out == nullptr || out_len != n) return layer_error(LayerStatus::size_mismatch, "out");
  if (LayerError e = ensure_workspace(length); !e.ok()) return e;
  if (LayerError e = resolve_positions(length, options); !e.ok()) return e;
  // The attention packs grow with L: size them here so that nothing can fail later.
  const std::int64_t dh = d / config_.heads;
  if (!keys_.pack_transposed(qkv_.data(), length, dh, 3 * d) ||
      !values_.pack(qkv_.data(), length, dh, 3 * d)) {
    release_workspace();
    return layer_error(LayerStatus::out_of_memory, "length");
  }

  float* xs = x_.data();
  std::memmove(xs, x, n * sizeof(float));
  float* sub = sublayer_.data();
  float* normed = normed_.data();
  const Epilogue act = config_.activation == Activation::gelu ? Epilogue::gelu : Epilogue::relu;
  const std::int64_t f = config_.ff_dim;
  if (config_.norm_first) {
    layer_norm(xs, norm1_weight_, norm1_bias_, length, normed);
    self_attention(normed, length, options, sub);
    for (std::size_t i = 0; i < n; ++i)
      xs[i] = xs[i] + sub[i];
    layer_norm(xs, norm2_weight_, norm2_bias_, length, normed);
    gemm(normed, d, length, linear1_, linear1_bias_.data(), act, hidden_.data(), f, options.pool);
    gemm(hidden_.data(), f, length, linear2_, linear2_bias_.data(), Epilogue::none, sub, d,
         options.pool);
    for (std::size_t i = 0; i < n; ++i)
      out[i] = xs[i] + sub[i];
  } else {
    self_attention(xs, length, options, sub);
    for (std::size_t i = 0; i < n; ++i)
      normed[i] = xs[i] + sub[i];
    layer_norm(normed, norm1_weight_, norm1_bias_, length, xs);
    gemm(xs, d, length, linear1_, linear1_bias_.data(), act, hidden_.data(), f, options.pool);
    gemm(hidden_.data(), f, length, linear2_, linear2_bias_.data(), Epilogue::none, sub, d,
         options.pool);
    for (std::size_t i = 0; i < n; ++i)
      normed[i] = xs[i] + sub[i];
    layer_norm(normed, norm2_weight_, norm2_bias_, length, out);
  }
  has_attention_ = true;
  attention_in_key_order_ = false;
  last_length_ = length;
  return {};
}

const float* TransformerEncoderLayer::attention() const {
  if (!has_attention_) return nullptr;
  if (!attention_in_key_order_ && !keys_in_row_order_) {
    // Each row holds the probabilities of the visible keys in visiting order: scatter them to
    // their key positions, hidden keys 0.
    const std::int64_t l = last_length_, m = visible_keys_;
    const std::int32_t* order = key_order_.data();
    float* row_copy = key_row_.data();
    for (std::int64_t r = 0; r < config_.heads * l; ++r) {
      float* row = probs_.data() + r * l;
      std::memcpy(row_copy, row, static_cast<std::size_t>(m) * sizeof(float));
      std::memset(row, 0, static_cast<std::size_t>(l) * sizeof(float));
      for (std::int64_t c = 0; c < m; ++c)
        row[order[c]] = row_copy[c];
    }
    attention_in_key_order_ = true;
  }
  return probs_.data();
}

}  // namespace posenc
