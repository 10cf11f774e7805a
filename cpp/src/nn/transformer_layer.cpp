// TransformerEncoderLayer: weights by state_dict name, the forward pass, masks and softmax.
#include "posenc/nn/transformer_layer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

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

LayerError validate(const LayerConfig& c) {
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
  return {};
}

LayerError TransformerEncoderLayer::configure(const LayerConfig& config) {
  if (LayerError e = validate(config); !e.ok()) return e;
  config_ = config;
  configured_ = true;
  for (bool& s : set_)
    s = false;
  has_attention_ = false;
  return {};
}

LayerError TransformerEncoderLayer::set_tensor(std::string_view name, const float* data,
                                               std::size_t count, const std::int64_t* shape,
                                               int ndim) {
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
  const bool fits = detail::checked_multiply(l, 3 * d, &l3d) &&
                    detail::checked_multiply(l, f, &lf) && detail::checked_multiply(h, l, &hl) &&
                    detail::checked_multiply(hl, l, &hll) && l3d <= FloatBuffer::kMaxSize &&
                    lf <= FloatBuffer::kMaxSize && hll <= FloatBuffer::kMaxSize;
  if (!fits || !x_.resize(l * d) || !normed_.resize(l * d) || !qkv_.resize(l3d) ||
      !heads_out_.resize(l * d) || !sublayer_.resize(l * d) || !hidden_.resize(lf) ||
      !probs_.resize(hll) || !key_order_.resize(2 * l) || !key_row_.resize(l)) {
    release_workspace();
    return layer_error(LayerStatus::out_of_memory, "length");
  }
  capacity_ = length;
  return {};
}

void TransformerEncoderLayer::release_workspace() {
  for (FloatBuffer* b :
       {&x_, &normed_, &qkv_, &heads_out_, &sublayer_, &hidden_, &probs_, &key_row_})
    *b = FloatBuffer();
  key_order_ = IndexBuffer();
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

namespace {

// The order in which attention visits the keys: the positions of the keys that the padding mask
// leaves visible, sorted by the bits of their rows of x (the attention input): by the first
// value's bits as an unsigned integer, then by the whole row's bytes (memcmp); equal rows by
// position. Writes them to order and returns their count; scratch holds L entries.
//
// Why: a sum over keys (the softmax denominator, probabilities times values) rounds differently
// in a different order. Visiting keys by content, not position, makes every such sum the same
// sequence of float operations however the tokens are permuted, so without a positional encoding
// the layer is exactly permutation-equivariant. Equal rows give bit-identical keys and values,
// so their relative order does not change any result.
//
// A stable bottom-up merge sort (L log2 L row comparisons, most decided by the first bytes) rather
// than std::sort, whose instantiation costs about 5 KB of wasm.
std::int64_t canonical_key_order(const float* x, std::int64_t length, std::int64_t d,
                                 const std::uint8_t* key_padding_mask, std::int32_t* order,
                                 std::int32_t* scratch) {
  std::int64_t n = 0;
  for (std::int64_t j = 0; j < length; ++j)
    if (key_padding_mask == nullptr || key_padding_mask[j] == 0)
      order[n++] = static_cast<std::int32_t>(j);
  const std::size_t row_bytes = static_cast<std::size_t>(d) * sizeof(float);
  auto before = [x, d, row_bytes](std::int32_t a, std::int32_t b) {
    std::uint32_t first_a, first_b;  // most rows differ here: no memcmp call
    std::memcpy(&first_a, x + a * d, sizeof first_a);
    std::memcpy(&first_b, x + b * d, sizeof first_b);
    if (first_a != first_b) return first_a < first_b;
    return std::memcmp(x + a * d, x + b * d, row_bytes) < 0;
  };
  std::int32_t* from = order;
  std::int32_t* to = scratch;
  for (std::int64_t width = 1; width < n; width *= 2) {
    for (std::int64_t lo = 0; lo < n; lo += 2 * width) {
      const std::int64_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      std::int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)  // ties take the left run first: stable
        to[k++] = before(from[j], from[i]) ? from[j++] : from[i++];
      // One of the runs is used up; copy the rest of the other.
      std::memcpy(to + k, from + i, static_cast<std::size_t>(mid - i) * sizeof(std::int32_t));
      std::memcpy(to + k + (mid - i), from + j,
                  static_cast<std::size_t>(hi - j) * sizeof(std::int32_t));
    }
    std::swap(from, to);
  }
  if (from != order) std::memcpy(order, from, static_cast<std::size_t>(n) * sizeof(std::int32_t));
  return n;
}

}  // namespace

// out (L x d) = out_proj(attention(x)). Keys are visited in canonical_key_order(): scores,
// softmax and probabilities times values are computed over the m visible keys in that order. The
// probabilities stay in probs_ in that order (row stride L, m entries per row) until attention()
// asks for them.
void TransformerEncoderLayer::self_attention(const float* x, std::int64_t length,
                                             const ForwardOptions& options, float* out) {
  const std::int64_t d = config_.d_model, heads = config_.heads, dh = d / heads;
  const std::int64_t l = length;
  float* qkv = qkv_.data();
  gemm(x, d, l, in_proj_, in_proj_bias_.data(), Epilogue::none, qkv, 3 * d);
  // PyTorch divides q by sqrt(head dim) (a float32 division by the rounded square root).
  const float q_scale = static_cast<float>(std::sqrt(static_cast<double>(dh)));
  for (std::int64_t i = 0; i < l; ++i)
    for (std::int64_t c = 0; c < d; ++c)
      qkv[i * 3 * d + c] /= q_scale;

  std::int32_t* order = key_order_.data();
  const std::int64_t m = canonical_key_order(x, l, d, options.key_padding_mask, order, order + l);
  visible_keys_ = m;
  for (std::int64_t h = 0; h < heads; ++h) {
    float* scores = probs_.data() + h * l * l;
    float* head_out = heads_out_.data() + h * dh;
    if (m == 0) {  // every key hidden: zero probabilities, zero output
      std::memset(scores, 0, static_cast<std::size_t>(l * l) * sizeof(float));
      for (std::int64_t i = 0; i < l; ++i)
        std::memset(head_out + i * d, 0, static_cast<std::size_t>(dh) * sizeof(float));
      continue;
    }
    // scores[i][c] = q_i . k_order[c], for the m visible keys.
    keys_.pack_transposed(qkv + d + h * dh, m, dh, 3 * d, order);
    gemm(qkv + h * dh, 3 * d, l, keys_, nullptr, Epilogue::none, scores, l);
    for (std::int64_t i = 0; i < l; ++i) {
      float* row = scores + i * l;
      const std::int64_t last = options.causal ? i : l;  // keys at positions <= last are visible
      float max = -INFINITY;
      for (std::int64_t c = 0; c < m; ++c)
        if (order[c] <= last && row[c] > max) max = row[c];
      double sum = 0.0;  // hidden keys add +0, which changes nothing
      for (std::int64_t c = 0; c < m; ++c) {
        row[c] = order[c] <= last && max != -INFINITY ? std::exp(row[c] - max) : 0.0f;
        sum += row[c];
      }
      if (sum > 0.0) {
        const float total = static_cast<float>(sum);
        for (std::int64_t c = 0; c < m; ++c)
          row[c] /= total;
      }
    }
    values_.pack(qkv + 2 * d + h * dh, m, dh, 3 * d, order);
    gemm(scores, l, l, values_, nullptr, Epilogue::none, head_out, d);
  }
  gemm(heads_out_.data(), d, l, out_proj_, out_proj_bias_.data(), Epilogue::none, out, d);
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
    gemm(normed, d, length, linear1_, linear1_bias_.data(), act, hidden_.data(), f);
    gemm(hidden_.data(), f, length, linear2_, linear2_bias_.data(), Epilogue::none, sub, d);
    for (std::size_t i = 0; i < n; ++i)
      out[i] = xs[i] + sub[i];
  } else {
    self_attention(xs, length, options, sub);
    for (std::size_t i = 0; i < n; ++i)
      normed[i] = xs[i] + sub[i];
    layer_norm(normed, norm1_weight_, norm1_bias_, length, xs);
    gemm(xs, d, length, linear1_, linear1_bias_.data(), act, hidden_.data(), f);
    gemm(hidden_.data(), f, length, linear2_, linear2_bias_.data(), Epilogue::none, sub, d);
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
  if (!attention_in_key_order_) {
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
