// The rotary position step of the encoder layer's attention: rotate_heads() (see
// posenc/nn/position_step.hpp): the rotary family's float64 frequencies, float64 angles, float32
// cos/sin and products, on rows with a stride (the layer's packed q and k).
#include <algorithm>
#include <cmath>
#include <vector>

#include "posenc/nn/position_step.hpp"
#include "posenc/rotary/rotary.hpp"
#include "sincos/sincos_double.hpp"

namespace posenc {

namespace {

// Pairs per chunk: the chunk's frequencies and one row's cos/sin stay on the stack (1 KB).
constexpr std::int64_t kPairChunk = 64;

}  // namespace

bool rotary_frequencies_of(double theta, std::int64_t rotary_dim, double* out) {
  // The rotary family's frequencies of the explicit options { headDim: r, base: theta }.
  RotarySpec spec;
  spec.head_dim = rotary_dim;
  spec.base = theta;
  std::vector<double> inv;
  double attention = 1.0;
  if (!rotary_frequencies(spec, 0.0, &inv, &attention).ok()) return false;
  std::copy(inv.begin(), inv.end(), out);
  return true;
}

void rotate_heads(float* x, std::int64_t rows, std::int64_t heads, std::int64_t head_dim,
                  std::int64_t stride, const RotaryParams& params, const double* positions) {
  const std::int64_t r = params.rotary_dim, half = r / 2;
  // Element offsets of the two members of pair k within a head.
  const bool interleaved = params.layout == RotaryLayout::interleaved;
  const std::int64_t first_step = interleaved ? 2 : 1, second_offset = interleaved ? 1 : half;
  float cos_row[kPairChunk], sin_row[kPairChunk];
  for (std::int64_t k0 = 0; k0 < half; k0 += kPairChunk) {
    const std::int64_t n = half - k0 < kPairChunk ? half - k0 : kPairChunk;
    const double* frequency = params.frequencies + k0;
    for (std::int64_t row = 0; row < rows; ++row) {
      const double p = positions[row];
      for (std::int64_t k = 0; k < n; ++k) {
        const double angle = p * frequency[k];
        double sa, ca;
        detail::sincos_double(angle, sa, ca);
        cos_row[k] = static_cast<float>(ca);
        sin_row[k] = static_cast<float>(sa);
      }
      for (std::int64_t h = 0; h < heads; ++h) {
        float* a = x + row * stride + h * head_dim + k0 * first_step;
        float* b = a + second_offset;
        for (std::int64_t k = 0; k < n; ++k) {
          const float av = a[k * first_step], bv = b[k * first_step];
          const float c = cos_row[k], s = sin_row[k];
          a[k * first_step] = av * c - bv * s;  // q * cos + rotate_half(q) * sin, first half
          b[k * first_step] = bv * c + av * s;  // second half
        }
      }
    }
  }
}

}  // namespace posenc
