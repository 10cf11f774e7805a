// posenc: the one place where positions enter the encoder layer's self-attention.
//
//   q, k, v = x in_proj^T + bias
//   position step   none:   nothing (the layer is permutation-equivariant, see
//   transformer_layer.hpp)
//                   rotary: q and k of every head rotated by their row's position (rotate_heads)
//                   alibi:  -slope_h * distance(query, key) added to the scaled scores (alibi_bias)
//   scores = (q / sqrt(head_dim)) k^T (+ ALiBi bias) + masks;  softmax;  times v;  out_proj
//
// Row positions are 0..L-1 by default, or an offset plus the row index, or one explicit position
// per row (ForwardOptions). The sinusoidal encodings (the paper's table and its presets) are not
// a step here: the Model adds them to the embeddings before the first layer.
//
// The layouts and modes are the rotary and ALiBi families' own (posenc/rotary/spec.hpp,
// posenc/alibi.hpp), and so are the ALiBi slopes (alibi_slopes()). rotate_heads() is the layer's
// rotation of q and k in place (cpp/src/nn/position_step.cpp).
#pragma once

#include <cstdint>

#include "posenc/alibi.hpp"
#include "posenc/rotary/spec.hpp"

namespace posenc {

enum class PositionMethod : std::uint8_t { none, rotary, alibi };

// RotaryLayout: half (pairs (i, i + rotary_dim / 2), HF LLaMA's rotate_half) or interleaved
// (pairs (2i, 2i + 1), GPT-J). AlibiMode in the layer: causal adds -slope * (p_query - p_key) to
// the keys at or before the query (use it with the causal mask, which hides the later ones: the
// ALiBi paper); symmetric adds -slope * |p_query - p_key| to every key (bidirectional attention).

// The largest |position| a forward accepts (rotary angles and ALiBi distances are float64).
inline constexpr double kMaxLayerPosition = 2147483647.0;  // 2^31 - 1

struct PositionConfig {
  PositionMethod method = PositionMethod::none;
  // rotary: the base (LLaMA's rope_theta), finite and > 1. Frequency i of r rotary dims is
  // theta^(-2i / r), i = 0 .. r/2 - 1, in float64.
  double rope_theta = 10000.0;
  // rotary: how many leading dims of each head rotate (partial rotary, the rest pass through):
  // even, 2..head_dim; 0 means head_dim (which must then be even).
  std::int64_t rotary_dim = 0;
  RotaryLayout rotary_layout = RotaryLayout::half;
  AlibiMode alibi_mode = AlibiMode::causal;
};

// The rotation of one layer: the number of rotated dims already resolved (never 0).
struct RotaryParams {
  std::int64_t rotary_dim = 0;  // even, 2..head_dim
  RotaryLayout layout = RotaryLayout::half;
  // rotary_dim / 2 frequencies from rotary_frequencies_of(theta, rotary_dim, ...) (the layer
  // computes them once, when it is configured).
  const double* frequencies = nullptr;
};

// w_k = theta^(-2k / rotary_dim), k < rotary_dim / 2: the float64 nearest to the real number, the
// heads of the rotary family's frequencies (rotary_frequencies, cpp/src/rotary/frequencies.cpp)
// for the explicit options { headDim: rotary_dim, base: theta } (the layer forms its angles from
// the heads alone: its float32 activations are far coarser than their tails). False, out untouched,
// when those options are invalid (theta not finite and > 1, rotary_dim not even in 2..65536) or
// memory runs out.
bool rotary_frequencies_of(double theta, std::int64_t rotary_dim, double* out);

// Rotates `heads` heads of head_dim floats in each of `rows` rows (row r starts at x + r * stride,
// head h at x + r * stride + h * head_dim) by row r's position p = positions[r]: for pair k of the
// layout (k = 0 .. rotary_dim/2 - 1, frequency w_k = params.frequencies[k]),
//   a' = a cos - b sin,   b' = b cos + a sin,
// where (a, b) = (x[k], x[k + rotary_dim/2]) (half) or (x[2k], x[2k + 1]) (interleaved), and
// cos, sin = float32(cos(p w_k)), float32(sin(p w_k)) with p w_k in float64: HF LLaMA's
// apply_rotary_pos_emb(q, k, cos, sin) (q * cos + rotate_half(q) * sin) with float64 angles. The
// products and sums are float32, so a result is within 1.5 ulp of the exact rotation of its
// float32 inputs by the float32 cos and sin. With w_k from rotary_frequencies_of (1 / theta^(2k/r)
// in float64) and the angle p w_k rounded once in float64, the cos and sin are the correctly
// rounded float32 values up to |p| ~ 10^6 but for rare ties, and within 2e-5 at |p| =
// kMaxLayerPosition. Dims rotary_dim..head_dim-1 are not touched. q and k of the in-projection are
// one call: 2 * heads heads of the same positions.
void rotate_heads(float* x, std::int64_t rows, std::int64_t heads, std::int64_t head_dim,
                  std::int64_t stride, const RotaryParams& params, const double* positions);

}  // namespace posenc
