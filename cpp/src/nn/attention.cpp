// TransformerEncoderLayer's self-attention: input projection, the position step, masked softmax,
// values, out_proj (see transformer_layer.hpp and position_step.hpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "nn/softmax.hpp"
#include "posenc/nn/transformer_layer.hpp"
#include "posenc/parallel/thread_pool.hpp"

namespace posenc {

namespace {

// The order in which attention visits the keys without a position step: the positions of the keys
// that the padding mask leaves visible, sorted by the bits of their rows of x (the attention
// input): by the first value's bits as an unsigned integer, then by the whole row's bytes
// (memcmp); equal rows by position. Writes them to order and returns their count; scratch holds L
// entries.
//
// Why: a sum over keys (the softmax denominator, probabilities times values) rounds differently
// in a different order. Visiting keys by content, not position, makes every such sum the same
// sequence of float operations however the tokens are permuted, so without a positional encoding
// the layer is exactly permutation-equivariant. Equal rows give bit-identical keys and values,
// so their relative order does not change any result.
//
// A stable bottom-up merge sort (L log2 L row comparisons, most decided by the first bytes) rather
// than std::sort, whose instantiation costs about 5 KB of wasm.
std::int64_t content_key_order(const float* x, std::int64_t length, std::int64_t d,
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

// The order with a position step: the visible keys by row index.
std::int64_t row_key_order(std::int64_t length, const std::uint8_t* key_padding_mask,
                           std::int32_t* order) {
  std::int64_t n = 0;
  for (std::int64_t j = 0; j < length; ++j)
    if (key_padding_mask == nullptr || key_padding_mask[j] == 0)
      order[n++] = static_cast<std::int32_t>(j);
  return n;
}

// Rows per block of the causal products in row order: each block multiplies only the keys its
// last row can see.
constexpr std::int64_t kCausalBlock = 16;

}  // namespace

// out (L x d) = out_proj(attention(x)), positions_ already resolved. The probabilities stay in
// probs_ in visiting order (row stride L, m entries per row) until attention() asks for them.
void TransformerEncoderLayer::self_attention(const float* x, std::int64_t length,
                                             const ForwardOptions& options, float* out) {
  const std::int64_t d = config_.d_model, heads = config_.heads, dh = d / heads;
  const std::int64_t l = length;
  const PositionConfig& position = config_.position;
  const PositionMethod method = options.position_step ? position.method : PositionMethod::none;
  float* qkv = qkv_.data();

  // 1. Input projection.
  gemm(x, d, l, in_proj_, in_proj_bias_.data(), Epilogue::none, qkv, 3 * d, options.pool);

  // 2. The position step. Rotary turns q and k (2 * heads heads of dh, side by side in each row)
  // before the scaling, as HF LLaMA rotates before its scaled product; ALiBi is a bias in stage 3.
  if (method == PositionMethod::rotary) {
    RotaryParams params;
    params.rotary_dim = position.rotary_dim == 0 ? dh : position.rotary_dim;
    params.layout = position.rotary_layout;
    params.frequencies = rotary_frequencies_.data();
    rotate_heads(qkv, l, 2 * heads, dh, 3 * d, params, positions_.data());
  }
  // PyTorch divides q by sqrt(head dim) (a float32 division by the rounded square root).
  const float q_scale = static_cast<float>(std::sqrt(static_cast<double>(dh)));
  for (std::int64_t i = 0; i < l; ++i)
    for (std::int64_t c = 0; c < d; ++c)
      qkv[i * 3 * d + c] /= q_scale;

  // The keys attention visits, and in which order.
  std::int32_t* order = key_order_.data();
  const bool content_order = method == PositionMethod::none;
  visible_keys_ = content_order
                      ? content_key_order(x, l, d, options.key_padding_mask, order, order + l)
                      : row_key_order(l, options.key_padding_mask, order);
  keys_in_row_order_ = !content_order && visible_keys_ == l;
  if (method != PositionMethod::none) {  // positions_ holds them only with a step
    double* key_positions = positions_.data() + l;
    for (std::int64_t c = 0; c < visible_keys_; ++c)
      key_positions[c] = positions_.data()[order[c]];
  }

  // 3. and 4. per head.
  for (std::int64_t h = 0; h < heads; ++h)
    attend_head(h, l, options, method, content_order);

  // 5. out_proj.
  gemm(heads_out_.data(), d, l, out_proj_, out_proj_bias_.data(), Epilogue::none, out, d,
       options.pool);
}

void TransformerEncoderLayer::attend_head(std::int64_t h, std::int64_t l,
                                          const ForwardOptions& options, PositionMethod method,
                                          bool content_order) {
  const std::int64_t d = config_.d_model, dh = d / config_.heads, m = visible_keys_;
  const float* qkv = qkv_.data();
  const std::int32_t* order = key_order_.data();
  float* scores = probs_.data() + h * l * l;
  float* head_out = heads_out_.data() + h * dh;
  if (m == 0) {  // every key hidden: zero probabilities, zero output
    std::memset(scores, 0, static_cast<std::size_t>(l * l) * sizeof(float));
    for (std::int64_t i = 0; i < l; ++i)
      std::memset(head_out + i * d, 0, static_cast<std::size_t>(dh) * sizeof(float));
    return;
  }
  const std::int32_t* gather = keys_in_row_order_ ? nullptr : order;
  keys_.pack_transposed(qkv + d + h * dh, m, dh, 3 * d, gather);
  values_.pack(qkv + 2 * d + h * dh, m, dh, 3 * d, gather);
  // In row order the keys query i sees under the causal mask are the first visible(i) of the m.
  const bool causal_prefix = options.causal && !content_order;
  auto visible_before = [order, m](std::int64_t i) {  // keys at rows <= i (order ascending)
    std::int64_t lo = 0, hi = m;
    while (lo < hi) {
      const std::int64_t mid = (lo + hi) / 2;
      if (order[mid] <= i)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  };

  // scores[i][c] = q_i . k_order[c] (q already scaled), for the m visible keys.
  const float* q = qkv + h * dh;
  if (causal_prefix) {
    for (std::int64_t i0 = 0; i0 < l; i0 += kCausalBlock) {
      const std::int64_t rows = std::min(kCausalBlock, l - i0);
      gemm_part(q + i0 * 3 * d, 3 * d, rows, keys_, dh, visible_before(i0 + rows - 1),
                scores + i0 * l, l, options.pool);
    }
  } else {
    gemm(q, 3 * d, l, keys_, nullptr, Epilogue::none, scores, l, options.pool);
  }

  // Row positions exist only with a position step (the workspace holds none without one).
  const double* key_positions = positions_.data() != nullptr ? positions_.data() + l : nullptr;
  const double slope = method == PositionMethod::alibi ? alibi_slopes_.data()[h] : 0.0;
  // ALiBi with consecutive positions: the bias depends on the row distance only, one table.
  const bool alibi_table = method == PositionMethod::alibi && positions_consecutive_;
  if (alibi_table)
    detail::alibi_distance_table(alibi_table_.data(), l, slope, config_.position.alibi_mode);
  // The rows are independent: with a pool, blocks of them go to its threads.
  auto softmax_rows = [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i) {
      float* row = scores + i * l;
      std::int64_t count = m;
      const std::int32_t* key_pos = nullptr;
      if (options.causal && content_order) key_pos = order;  // hide keys at rows > i
      if (causal_prefix) count = visible_before(i);
      const float* bias = nullptr;  // ALiBi's table slice, added by the softmax's first pass
      if (alibi_table) {
        bias = alibi_table_.data() + (l - 1 - i);  // bias[j]: key row j
        if (gather != nullptr) {  // hidden keys: the visible ones are not contiguous
          for (std::int64_t c = 0; c < count; ++c)
            row[c] += bias[order[c]];
          bias = nullptr;
        }
      } else if (method == PositionMethod::alibi) {
        detail::add_alibi_bias(row, count, key_positions, positions_.data()[i], slope,
                               config_.position.alibi_mode);
      }
      detail::softmax_row(row, m, count, key_pos, static_cast<std::int32_t>(i), bias);
    }
  };
  for_each_range(options.pool, l, std::max<std::int64_t>(1, 65536 / l), 1, softmax_rows);

  // head_out = probabilities times v.
  if (causal_prefix) {
    for (std::int64_t i0 = 0; i0 < l; i0 += kCausalBlock) {
      const std::int64_t rows = std::min(kCausalBlock, l - i0);
      gemm_part(scores + i0 * l, l, rows, values_, visible_before(i0 + rows - 1), dh,
                head_out + i0 * d, d, options.pool);
    }
  } else {
    gemm(scores, l, l, values_, nullptr, Epilogue::none, head_out, d, options.pool);
  }
}

}  // namespace posenc
