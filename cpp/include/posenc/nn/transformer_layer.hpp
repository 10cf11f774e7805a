// posenc: one Transformer encoder layer, computing what PyTorch's nn.TransformerEncoderLayer
// (batch_first, eval mode: no dropout) computes, from the same state_dict, with an optional
// position step inside the attention (rotary or ALiBi, see position_step.hpp).
//
// Post-norm (norm_first = false):  x = norm1(x + SA(x));        x = norm2(x + FF(x))
// Pre-norm  (norm_first = true):   x = x + SA(norm1(x));        x = x + FF(norm2(x))
// SA: multi-head self-attention in five stages, each once for every method:
//   1. input projection   q, k, v = x in_proj_weight^T + in_proj_bias
//   2. position step      none; rotary: q and k of every head rotated by the row's position;
//                         ALiBi: a bias per head and (query, key) distance, added in stage 3
//   3. masked softmax     per head, softmax(q k^T / sqrt(dModel / heads) (+ ALiBi) + masks)
//                         (PyTorch divides q by the rounded square root before the product)
//   4. values             probabilities times v, per head
//   5. out_proj
// FF: linear2(activation(linear1(x))).
//
// Precision: every product is a float32 dot product (see gemm.hpp); layer norm statistics and
// softmax sums are accumulated in float64; e^x is a float32 polynomial within 2 ulp. On the
// committed PyTorch fixtures (tests/fixtures/layer) the largest absolute difference from PyTorch's
// float32 output is at most 4e-6, and from its attention probabilities at most 1e-6.
//
// Masks: causal hides keys j > i from query i (PyTorch's generate_square_subsequent_mask), by row
// index whatever the positions; the key-padding mask hides key j when mask[j] != 0 (PyTorch's
// True). A query row whose keys are all hidden gets all-zero attention probabilities (PyTorch would
// produce NaN there).
//
// Permutation equivariance (method none only): the layer has no notion of position apart from the
// causal mask. Permuting the rows of x (and the key-padding mask with them) permutes the rows of
// the output, and both axes of attention(), bit for bit, not just to rounding: every sum over keys
// (softmax denominator, probabilities times values) visits the keys in an order set by their
// content (their rows of the attention input, compared as bits), never by their position. Each
// output row is computed by the same operations wherever it sits (the GEMM's row tiles are bitwise
// alike; layer norm, the feed-forward, the residuals and e^x are row- or element-wise).
// With rotary or ALiBi the property cannot hold, by design: the positions are what tells the rows
// apart, so permuting x changes the output beyond rounding (tested). Those methods visit the keys
// in position order (row order), which lets the causal products skip the hidden triangle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "posenc/buffer.hpp"
#include "posenc/nn/gemm.hpp"
#include "posenc/nn/layer_status.hpp"
#include "posenc/nn/position_step.hpp"

namespace posenc {

enum class Activation : std::uint8_t { relu, gelu };

inline constexpr std::int64_t kMaxModelDim = 8192;
inline constexpr std::int64_t kMaxHeads = 256;
inline constexpr std::int64_t kMaxFfDim = 65536;
// The longest sequence a forward accepts (the attention probabilities are heads x L x L floats).
inline constexpr std::int64_t kMaxSequenceLength = 8192;

struct LayerConfig {
  std::int64_t d_model = 0;  // 1..kMaxModelDim, a multiple of heads
  std::int64_t heads = 0;    // 1..kMaxHeads
  std::int64_t ff_dim = 0;   // 1..kMaxFfDim (PyTorch's dim_feedforward)
  bool norm_first = false;
  Activation activation = Activation::relu;
  double layer_norm_eps = 1e-5;  // finite, >= 0
  PositionConfig position;       // the position step in the attention (default none)
};

// Checks the config; the error names the field ("dModel", "heads", "ffDim", "activation",
// "layerNormEps", and for the position step "position", "ropeTheta", "rotaryDim",
// "rotaryLayout", "alibiMode").
LayerError validate(const LayerConfig& config);

struct ForwardOptions {
  bool causal = false;
  const std::uint8_t* key_padding_mask = nullptr;  // null, or L entries; nonzero hides that key
  // The positions of the rows for the position step: row i is at position_offset + i, or at
  // positions[i] when positions is given (L entries). Finite, |position| <= kMaxLayerPosition.
  // Checked whatever the method (errors: invalid_position, "positionOffset" / "positions[i]").
  double position_offset = 0.0;
  const double* positions = nullptr;
  // false: run this call without the position step (as method none), e.g. to show what it does.
  bool position_step = true;
  // With a pool: the products and the softmax rows are split between its threads (same bits).
  ThreadPool* pool = nullptr;
};

// The twelve state_dict names, in PyTorch's order.
inline constexpr int kLayerTensorCount = 12;
extern const char* const kLayerTensorNames[kLayerTensorCount];

// The shape of a state_dict tensor for a config: ndim (1 or 2) sizes, row-major, and the same
// sizes in terms of the config's fields as the JavaScript API names them ("3 dModel x dModel").
struct LayerTensorShape {
  std::int64_t dims[2] = {0, 0};
  int ndim = 0;
  const char* dim_names = "";
};

// The shape set_tensor() expects for tensor `index` (0 <= index < kLayerTensorCount, the order of
// kLayerTensorNames) under `config`.
LayerTensorShape layer_tensor_shape(const LayerConfig& config, int index);

class TransformerEncoderLayer {
 public:
  // Sets the config and forgets every weight (and frees the workspace and the last attention).
  // On error the layer keeps its previous state.
  LayerError configure(const LayerConfig& config);

  // Sets one weight by its state_dict name (e.g. "linear1.weight"). shape (ndim entries) is
  // checked when given; count must equal the expected element count; every value must be finite.
  // The data is copied. Errors: unknown_tensor (name), wrong_shape (name), non_finite (the first
  // NaN or infinite element, e.g. "linear1.weight[2][5]"), out_of_memory; the layer is unchanged
  // then.
  LayerError set_tensor(std::string_view name, const float* data, std::size_t count,
                        const std::int64_t* shape = nullptr, int ndim = 0);

  // ok when every weight is set; otherwise missing_tensor naming the first one missing.
  LayerError check_complete() const;
  bool ready() const { return check_complete().ok(); }
  const LayerConfig& config() const { return config_; }

  // out (L x dModel, row-major) = layer(x (L x dModel)). x and out may be the same buffer.
  // Errors: not_ready, invalid_length ("length"), size_mismatch ("x" / "out"), out_of_memory
  // ("length": then the workspace is freed, and so are the last attention probabilities).
  // The attention probabilities of this call are kept until the next forward.
  LayerError forward(const float* x, std::size_t x_len, std::int64_t length,
                     const ForwardOptions& options, float* out, std::size_t out_len);

  // The attention probabilities of the last successful forward: heads x L x L, row-major
  // ([h][query][key]); null before any forward. The forward keeps them in the order it visited
  // the keys; the first call after a forward puts them in key order (O(heads L^2), in place).
  const float* attention() const;
  std::int64_t attention_length() const { return has_attention_ ? last_length_ : 0; }

 private:
  LayerError ensure_workspace(std::int64_t length);
  // Frees the workspace (after a forward ran out of memory: nothing of it stays allocated).
  void release_workspace();
  void layer_norm(const float* x, const FloatBuffer& weight, const FloatBuffer& bias,
                  std::int64_t rows, float* out) const;
  // Fills positions_ from the options (or returns the invalid_position error).
  LayerError resolve_positions(std::int64_t length, const ForwardOptions& options);
  void self_attention(const float* x, std::int64_t length, const ForwardOptions& options,
                      float* out);
  // Stage 3 and 4 for head h: scores of the m visible keys (in key_order_), softmax, times v.
  void attend_head(std::int64_t h, std::int64_t length, const ForwardOptions& options,
                   PositionMethod method, bool content_order);

  LayerConfig config_;
  bool configured_ = false;
  bool set_[kLayerTensorCount] = {};
  PackedMatrix in_proj_, out_proj_, linear1_, linear2_;
  FloatBuffer in_proj_bias_, out_proj_bias_, linear1_bias_, linear2_bias_;
  FloatBuffer norm1_weight_, norm1_bias_, norm2_weight_, norm2_bias_;

  // Workspace, grown on demand.
  std::int64_t capacity_ = 0;
  FloatBuffer x_, normed_, qkv_, heads_out_, sublayer_, hidden_, packed_tmp_;
  IndexBuffer key_order_;  // the visible keys in the order attention visits them, and scratch (2L)
  std::int64_t visible_keys_ = 0;
  bool keys_in_row_order_ = false;     // key_order_ is 0..L-1 (attention() has nothing to reorder)
  Buffer<double> positions_;           // L row positions, then the m visible keys' positions (2L)
  bool positions_consecutive_ = true;  // positions_ are offset + row (no explicit positions)
  FloatBuffer alibi_table_;            // one head's ALiBi bias by row distance (2L)
  Buffer<double> rotary_frequencies_;  // rotary_dim / 2 entries for rotary, else empty
  Buffer<double> alibi_slopes_;        // heads entries for ALiBi, else empty
  // attention() restores key order lazily (a cache of the last forward's probabilities, hence
  // mutable): probs_ (heads x L x L) and one row of scratch (L floats).
  mutable FloatBuffer probs_, key_row_;
  mutable bool attention_in_key_order_ = false;
  PackedMatrix keys_, values_;
  bool has_attention_ = false;
  std::int64_t last_length_ = 0;
};

}  // namespace posenc
