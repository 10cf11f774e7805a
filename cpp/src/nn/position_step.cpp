// The rotary position step of the encoder layer's attention: rotate_heads() (see
// posenc/nn/position_step.hpp). To be replaced by the rotary family's kernel (cpp/src/rotary/,
// branch h-rotary) once it lands: same contract, float64 angles, float32 cos/sin and products.
#include <cmath>

#include "posenc/nn/position_step.hpp"
#include "sincos/sincos_double.hpp"

namespace posenc {

namespace {

constexpr double kLn2High = 0.693147180369123816490;    // ln 2 = kLn2High + kLn2Low, high part
constexpr double kLn2Low = 1.90821492927058770002e-10;  // exact in 32 bits (fdlibm's split)

// ln(b) for finite b > 0, within a few ulp: b = m 2^e with m in [sqrt(1/2), sqrt(2)), and
// ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.172, by its series to s^41.
double log_positive(double b) {
  int e = 0;
  double m = std::frexp(b, &e);  // [0.5, 1)
  if (m < 0.70710678118654752440) {
    m *= 2.0;
    --e;
  }
  const double s = (m - 1.0) / (m + 1.0), s2 = s * s;
  double sum = 0.0, term = s;
  double powers[21];
  for (int k = 0; k < 21; ++k) {
    powers[k] = term / (2 * k + 1);
    term *= s2;
  }
  for (int k = 20; k >= 0; --k)  // smallest first
    sum += powers[k];
  return 2.0 * sum + static_cast<double>(e) * kLn2Low + static_cast<double>(e) * kLn2High;
}

// e^x for |x| <= 700, within a few ulp: x = n ln 2 + r, |r| <= ln2 / 2, e^r by its Taylor series
// to r^17 (smallest terms first), times 2^n.
double exp_any(double x) {
  const double n = std::nearbyint(x * 1.44269504088896340736);
  const double r = (x - n * kLn2High) - n * kLn2Low;
  double terms[18];
  terms[0] = 1.0;
  for (int k = 1; k < 18; ++k)
    terms[k] = terms[k - 1] * r / k;
  double sum = 0.0;
  for (int k = 17; k >= 0; --k)
    sum += terms[k];
  return std::ldexp(sum, static_cast<int>(n));
}

// Pairs per chunk: the chunk's frequencies and one row's cos/sin stay on the stack (1 KB).
constexpr std::int64_t kPairChunk = 64;

}  // namespace

void rotate_heads(float* x, std::int64_t rows, std::int64_t heads, std::int64_t head_dim,
                  std::int64_t stride, const RotaryParams& params, const double* positions) {
  const std::int64_t r = params.rotary_dim, half = r / 2;
  // Element offsets of the two members of pair k within a head.
  const bool interleaved = params.layout == RotaryLayout::interleaved;
  const std::int64_t first_step = interleaved ? 2 : 1, second_offset = interleaved ? 1 : half;
  double frequency[kPairChunk];
  const double log_theta = log_positive(params.theta);
  float cos_row[kPairChunk], sin_row[kPairChunk];
  for (std::int64_t k0 = 0; k0 < half; k0 += kPairChunk) {
    const std::int64_t n = half - k0 < kPairChunk ? half - k0 : kPairChunk;
    // theta^(-2k / r) as e^(-2k / r ln theta): libm's pow would add 2.9 KB (gzipped) to the
    // package's wasm; this is within 1e-14 of it (relative; tested), far below what the float32
    // cos and sin can show at positions up to 10^6.
    for (std::int64_t k = 0; k < n; ++k)
      frequency[k] =
          exp_any(-2.0 * static_cast<double>(k0 + k) / static_cast<double>(r) * log_theta);
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
