// The masked softmax row kernel (scalar reference and wasm SIMD) and the ALiBi bias row.
#include "nn/softmax.hpp"

#include <cmath>
#include <cstring>

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

namespace posenc::detail {

namespace {

// Cephes expf constants: ln 2 = kLn2High + kLn2Low (kLn2High exact in 9 bits), the minimax
// polynomial of (e^r - 1 - r) / r^2 on |r| <= ln2/2.
constexpr float kExpLow = -87.33654475f;  // below: e^x is not a normal float32, return 0
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2High = 0.693359375f;
constexpr float kLn2Low = -2.12194440e-4f;
constexpr float kP0 = 1.9875691500e-4f, kP1 = 1.3981999507e-3f, kP2 = 8.3334519073e-3f,
                kP3 = 4.1665795894e-2f, kP4 = 1.6666665459e-1f, kP5 = 5.0000001201e-1f;

inline double sum_partials(const double (&s)[4]) {
  return (s[0] + s[1]) + (s[2] + s[3]);
}

inline bool visible(const std::int32_t* key_pos, std::int64_t c, std::int32_t last) {
  return key_pos == nullptr || key_pos[c] <= last;
}

#ifdef __wasm_simd128__

inline v128_t exp_nonpositive4(v128_t x) {
  const v128_t xs = wasm_f32x4_pmax(x, wasm_f32x4_splat(kExpLow));  // x < low ? low : x
  const v128_t n = wasm_f32x4_floor(
      wasm_f32x4_add(wasm_f32x4_mul(xs, wasm_f32x4_splat(kLog2e)), wasm_f32x4_splat(0.5f)));
  v128_t r = wasm_f32x4_sub(xs, wasm_f32x4_mul(n, wasm_f32x4_splat(kLn2High)));
  r = wasm_f32x4_sub(r, wasm_f32x4_mul(n, wasm_f32x4_splat(kLn2Low)));
  const v128_t z = wasm_f32x4_mul(r, r);
  v128_t y = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_splat(kP0), r), wasm_f32x4_splat(kP1));
  y = wasm_f32x4_add(wasm_f32x4_mul(y, r), wasm_f32x4_splat(kP2));
  y = wasm_f32x4_add(wasm_f32x4_mul(y, r), wasm_f32x4_splat(kP3));
  y = wasm_f32x4_add(wasm_f32x4_mul(y, r), wasm_f32x4_splat(kP4));
  y = wasm_f32x4_add(wasm_f32x4_mul(y, r), wasm_f32x4_splat(kP5));
  y = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_mul(y, z), r), wasm_f32x4_splat(1.0f));
  const v128_t scale =
      wasm_i32x4_shl(wasm_i32x4_add(wasm_i32x4_trunc_sat_f32x4(n), wasm_i32x4_splat(127)), 23);
  return wasm_v128_and(wasm_f32x4_mul(y, scale), wasm_f32x4_ge(x, wasm_f32x4_splat(kExpLow)));
}

// All-ones lanes where key_pos[c .. c+3] <= last (key_pos null: all).
inline v128_t visible4(const std::int32_t* key_pos, std::int64_t c, v128_t last) {
  if (key_pos == nullptr) return wasm_i32x4_splat(-1);
  return wasm_i32x4_le(wasm_v128_load(key_pos + c), last);
}

#endif

template <bool kSimd>
void softmax_row_impl(float* row, std::int64_t n, std::int64_t count, const std::int32_t* key_pos,
                      std::int32_t last, const float* bias) {
  std::int64_t c = 0;
  float max = -INFINITY;
#ifdef __wasm_simd128__
  const v128_t last4 = wasm_i32x4_splat(last);
  const v128_t minus_inf = wasm_f32x4_splat(-INFINITY);
  if (kSimd) {
    v128_t m4 = minus_inf;
    for (; c + 4 <= count; c += 4) {
      v128_t v = wasm_v128_load(row + c);
      if (bias != nullptr) {  // the bias joins the first pass over the row
        v = wasm_f32x4_add(v, wasm_v128_load(bias + c));
        wasm_v128_store(row + c, v);
      }
      v = wasm_v128_bitselect(v, minus_inf, visible4(key_pos, c, last4));
      m4 = wasm_f32x4_pmax(m4, v);
    }
    const float lanes[4] = {wasm_f32x4_extract_lane(m4, 0), wasm_f32x4_extract_lane(m4, 1),
                            wasm_f32x4_extract_lane(m4, 2), wasm_f32x4_extract_lane(m4, 3)};
    for (float v : lanes)
      if (v > max) max = v;
  }
#endif
  for (; c < count; ++c) {
    if (bias != nullptr) row[c] += bias[c];
    if (visible(key_pos, c, last) && row[c] > max) max = row[c];
  }
  if (max == -INFINITY) {  // nothing visible
    std::memset(row, 0, static_cast<std::size_t>(n) * sizeof(float));
    return;
  }
  double sums[4] = {0.0, 0.0, 0.0, 0.0};
  c = 0;
#ifdef __wasm_simd128__
  if (kSimd) {
    const v128_t max4 = wasm_f32x4_splat(max);
    v128_t low = wasm_f64x2_splat(0.0), high = low;  // sums 0, 1 and 2, 3
    for (; c + 4 <= count; c += 4) {
      v128_t e = exp_nonpositive4(wasm_f32x4_sub(wasm_v128_load(row + c), max4));
      e = wasm_v128_and(e, visible4(key_pos, c, last4));
      wasm_v128_store(row + c, e);
      low = wasm_f64x2_add(low, wasm_f64x2_promote_low_f32x4(e));
      high =
          wasm_f64x2_add(high, wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(e, e, 2, 3, 0, 1)));
    }
    sums[0] = wasm_f64x2_extract_lane(low, 0);
    sums[1] = wasm_f64x2_extract_lane(low, 1);
    sums[2] = wasm_f64x2_extract_lane(high, 0);
    sums[3] = wasm_f64x2_extract_lane(high, 1);
  }
#endif
  for (; c < count; ++c) {
    row[c] = visible(key_pos, c, last) ? exp_nonpositive(row[c] - max) : 0.0f;
    sums[c & 3] += row[c];
  }
  // Times the float32 reciprocal of the sum (as PyTorch's vectorised softmax): a multiply is
  // several times cheaper than a divide; the probabilities are within 1 ulp of e / sum.
  const float inverse = 1.0f / static_cast<float>(sum_partials(sums));
  c = 0;
#ifdef __wasm_simd128__
  if (kSimd) {
    const v128_t inverse4 = wasm_f32x4_splat(inverse);
    for (; c + 4 <= count; c += 4)
      wasm_v128_store(row + c, wasm_f32x4_mul(wasm_v128_load(row + c), inverse4));
  }
#endif
  for (; c < count; ++c)
    row[c] *= inverse;
  if (n > count) std::memset(row + count, 0, static_cast<std::size_t>(n - count) * sizeof(float));
}

}  // namespace

float exp_nonpositive(float x) {
  if (!(x >= kExpLow)) return 0.0f;
  const float n = std::floor(x * kLog2e + 0.5f);
  float r = x - n * kLn2High;
  r = r - n * kLn2Low;
  const float z = r * r;
  float y = kP0 * r + kP1;
  y = y * r + kP2;
  y = y * r + kP3;
  y = y * r + kP4;
  y = y * r + kP5;
  y = y * z + r + 1.0f;
  const std::int32_t bits = (static_cast<std::int32_t>(n) + 127) * (1 << 23);
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return y * scale;
}

void softmax_row(float* row, std::int64_t n, std::int64_t count, const std::int32_t* key_pos,
                 std::int32_t last, const float* bias) {
  softmax_row_impl<true>(row, n, count, key_pos, last, bias);
}

void softmax_row_scalar(float* row, std::int64_t n, std::int64_t count, const std::int32_t* key_pos,
                        std::int32_t last, const float* bias) {
  softmax_row_impl<false>(row, n, count, key_pos, last, bias);
}

void add_alibi_bias(float* row, std::int64_t count, const double* key_positions,
                    double query_position, double slope, AlibiMode mode) {
  const double minus_slope = -slope;
  if (mode == AlibiMode::symmetric) {
    for (std::int64_t c = 0; c < count; ++c)
      row[c] += static_cast<float>(minus_slope * std::fabs(query_position - key_positions[c]));
  } else {
    for (std::int64_t c = 0; c < count; ++c) {
      const double distance = query_position - key_positions[c];
      row[c] += static_cast<float>(minus_slope * (distance > 0.0 ? distance : 0.0));
    }
  }
}

void alibi_distance_table(float* table, std::int64_t l, double slope, AlibiMode mode) {
  const double minus_slope = -slope;
  for (std::int64_t u = 0; u < 2 * l - 1; ++u) {
    const double distance = static_cast<double>(l - 1 - u);  // p_query - p_key
    const double d = mode == AlibiMode::symmetric ? std::fabs(distance)
                     : distance > 0.0             ? distance
                                                  : 0.0;
    table[u] = static_cast<float>(minus_slope * d);
  }
}

}  // namespace posenc::detail
