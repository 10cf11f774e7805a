// Internal: the rotation kernels of RotaryEmbedding::apply, `scalar` and its wasm SIMD twin
// `simd` (bit-identical: the same float32 products and sums in the same order), and the row
// generator they share (float64 angles, sincos/kernel_f64.hpp). The build's kernels are
// `detail::rotary_kernel`.
#pragma once

#include <cstdint>

#include "sincos/kernel_f64.hpp"

namespace posenc::detail {

namespace scalar {

// Each head h < heads of x (head_stride floats apart): for i < n, the pair (x_i, x_{i+n}) becomes
// (x_i c_i - x_{i+n} s_i, x_{i+n} c_i + x_i s_i). Channels from 2n on are not touched.
inline void rotate_half(const float* c, const float* s, std::int64_t n, std::int64_t heads,
                        std::int64_t head_stride, float* x) {
  for (std::int64_t h = 0; h < heads; ++h) {
    float* v = x + h * head_stride;
    for (std::int64_t i = 0; i < n; ++i) {
      const float a = v[i], b = v[i + n];
      v[i] = a * c[i] - b * s[i];
      v[i + n] = b * c[i] + a * s[i];
    }
  }
}

// Interleaved pairs (x_{2i}, x_{2i+1}) with cd = each cosine twice and ss = (-s_i, s_i):
// x_j becomes x_j cd_j + x_{j^1} ss_j for j < rotary_dim.
inline void rotate_interleaved(const float* cd, const float* ss, std::int64_t rotary_dim,
                               std::int64_t heads, std::int64_t head_stride, float* x) {
  for (std::int64_t h = 0; h < heads; ++h) {
    float* v = x + h * head_stride;
    for (std::int64_t j = 0; j < rotary_dim; j += 2) {
      const float a = v[j], b = v[j + 1];
      v[j] = a * cd[j] + b * ss[j];
      v[j + 1] = b * cd[j + 1] + a * ss[j + 1];
    }
  }
}

// The float64 sines and cosines of a row (see simd::sincos_f64_two_pass).
inline void sincos_f64_two_pass(const SplitFrequencies& F, std::int64_t n, double p, double* s,
                                double* c) {
  sincos_f64(F, n, p, s, c);
}

// The cos_sin rows of one block (cos_sin_block below).
struct CosSinBlock {
  const double* sa;  // sin(a w_i), cos(a w_i) of the block anchor a (float64, np each)
  const double* ca;
  const double* step_s;  // sin(e w_i), cos(e w_i), row e at e * np
  const double* step_c;
  std::int64_t np = 0;  // padded pair count (the step table's row length)
  std::int64_t n = 0;   // pairs written
  float scale = 1.0f;   // HF's attention scaling, a float32 product after rounding (1: none)
  bool half = true;     // [c_0 .. c_{n-1}, c_0 .. c_{n-1}], else each value twice
  double anchor = 0.0;  // the block's anchor position a (row e is position a + e)
  SplitFrequencies F;   // the frequencies (np): the hard cases are recomputed from them
};

// Frequency i of one cos_sin_block row at position p (the scalar kernel, and the SIMD kernel's
// tail): the float32 nearest to sin / cos(p w_i), by the paper table's rounding test and fallback.
inline void cos_sin_one(const CosSinBlock& B, std::int64_t i, const double* sd, const double* cd,
                        double p, bool scaled, float* co, float* so) {
  float sv, cv;
  rotate1_exact(B.sa, B.ca, sd, cd, i, p, B.F, sv, cv);
  if (scaled) {
    sv *= B.scale;
    cv *= B.scale;
  }
  if (B.half) {
    co[i] = co[i + B.n] = cv;
    so[i] = so[i + B.n] = sv;
  } else {
    co[2 * i] = co[2 * i + 1] = cv;
    so[2 * i] = so[2 * i + 1] = sv;
  }
}

// Row e of a cos_sin_block call: its step-table rows, its output rows and its position.
struct BlockRow {
  const double* sd;
  const double* cd;
  float* co;
  float* so;
  double p;
};
inline BlockRow block_row(const CosSinBlock& B, std::int64_t e, std::int64_t e0, float* cos,
                          float* sin, std::int64_t stride) {
  return {B.step_s + e * B.np, B.step_c + e * B.np, cos + (e - e0) * stride,
          sin + (e - e0) * stride, B.anchor + static_cast<double>(e)};
}

// Rows e0 <= e < e1 of a block of cos_sin (row e at cos + (e - e0) * stride, same for sin):
// c_i = float32(ca_i cd_i - sa_i sd_i), s_i = float32(sa_i cd_i + ca_i sd_i) with (sd, cd) the
// step table's row e (detail::scalar::rotate_to_f32_exact's expressions), each the float32
// nearest to the exact value (rounding test, rounded_exact for the rare hard cases), times
// B.scale in float32 when it is not 1, written in B's layout (2 n floats per row each).
inline void cos_sin_block(const CosSinBlock& B, std::int64_t e0, std::int64_t e1, float* cos,
                          float* sin, std::int64_t stride) {
  const bool scaled = B.scale != 1.0f;
  for (std::int64_t e = e0; e < e1; ++e) {
    const BlockRow row = block_row(B, e, e0, cos, sin, stride);
    for (std::int64_t i = 0; i < B.n; ++i) {
      cos_sin_one(B, i, row.sd, row.cd, row.p, scaled, row.co, row.so);
    }
  }
}

}  // namespace scalar

#if defined(__wasm_simd128__) || defined(POSENC_SIMD_VIA_SIMDE)
namespace simd {

// Groups of 4 pairs outer, heads inner: each group's cos and sin are loaded once for all heads
// (the same products and sums as the scalar kernel, in another order of independent elements).
[[gnu::noinline]] inline void rotate_half(const float* c, const float* s, std::int64_t n, std::int64_t heads,
                        std::int64_t head_stride, float* x) {
  const std::int64_t n4 = n / 4 * 4;
  for (std::int64_t i = 0; i < n4; i += 4) {
    const v128_t vc = wasm_v128_load(c + i), vs = wasm_v128_load(s + i);
    float* v = x + i;
    for (std::int64_t h = 0; h < heads; ++h, v += head_stride) {
      const v128_t a = wasm_v128_load(v), b = wasm_v128_load(v + n);
      wasm_v128_store(v, wasm_f32x4_sub(wasm_f32x4_mul(a, vc), wasm_f32x4_mul(b, vs)));
      wasm_v128_store(v + n, wasm_f32x4_add(wasm_f32x4_mul(b, vc), wasm_f32x4_mul(a, vs)));
    }
  }
  if (n4 == n) return;
  for (std::int64_t h = 0; h < heads; ++h) {
    float* v = x + h * head_stride;
    for (std::int64_t i = n4; i < n; ++i) {
      const float a = v[i], b = v[i + n];
      v[i] = a * c[i] - b * s[i];
      v[i + n] = b * c[i] + a * s[i];
    }
  }
}

inline void rotate_interleaved(const float* cd, const float* ss, std::int64_t rotary_dim,
                               std::int64_t heads, std::int64_t head_stride, float* x) {
  const std::int64_t r4 = rotary_dim / 4 * 4;
  for (std::int64_t h = 0; h < heads; ++h) {
    float* v = x + h * head_stride;
    for (std::int64_t j = 0; j < r4; j += 4) {
      const v128_t a = wasm_v128_load(v + j);
      const v128_t swapped = wasm_i32x4_shuffle(a, a, 1, 0, 3, 2);
      wasm_v128_store(v + j, wasm_f32x4_add(wasm_f32x4_mul(a, wasm_v128_load(cd + j)),
                                            wasm_f32x4_mul(swapped, wasm_v128_load(ss + j))));
    }
    for (std::int64_t j = r4; j < rotary_dim; j += 2) {
      const float a = v[j], b = v[j + 1];
      v[j] = a * cd[j] + b * ss[j];
      v[j + 1] = b * cd[j + 1] + a * ss[j + 1];
    }
  }
}

// detail::scalar::sincos_f64 (the same values: simd::sincos_row's operations per lane), in two
// passes over strips of 64 frequencies: the reductions, then the polynomials. Each pass is a short
// loop of independent iterations that the CPU overlaps, where sincos_row's one long dependent
// chain per pair does not (the anchor of a decoding step: about 0.5 us instead of 0.7 for 64
// pairs, Node 20). n a multiple of 2.
[[gnu::noinline]] inline void sincos_f64_two_pass(const SplitFrequencies& F, std::int64_t n,
                                                  double p, double* s, double* c) {
  double ph, pl;
  split(p, ph, pl);
  const v128_t vp = splat(p), vph = splat(ph), vpl = splat(pl);
  constexpr std::int64_t kStrip = 64;
  alignas(16) double quadrant[kStrip];
  for (std::int64_t i0 = 0; i0 < n; i0 += kStrip) {
    const std::int64_t i1 = n - i0 < kStrip ? n : i0 + kStrip;
    // Pass 1: the exact products and their reduction (r = rh + rl into s and c, k aside).
    for (std::int64_t i = i0; i < i1; i += 2) {
      v128_t xh, xl, rh, rl;
      two_product(vp, vph, vpl, F, i, xh, xl);
      wasm_v128_store(quadrant + (i - i0), reduce_pio2(xh, xl, rh, rl));
      wasm_v128_store(s + i, rh);
      wasm_v128_store(c + i, rl);
    }
    // Pass 2: the polynomials and quadrants.
    for (std::int64_t i = i0; i < i1; i += 2) {
      v128_t sv, cv;
      sincos_reduced_f64(wasm_v128_load(s + i), wasm_v128_load(c + i), sv, cv);
      apply_quadrant_f64(wasm_v128_load(quadrant + (i - i0)), sv, cv);
      wasm_v128_store(s + i, sv);
      wasm_v128_store(c + i, cv);
    }
  }
}

// See scalar::cos_sin_block (the same float64 products and sums, four pairs at a time; the
// scalar tail for the last n % 4 pairs).
inline void cos_sin_block(const scalar::CosSinBlock& B, std::int64_t e0, std::int64_t e1,
                          float* cos, float* sin, std::int64_t stride) {
  const std::int64_t n = B.n, n4 = n / 4 * 4;
  const bool scaled = B.scale != 1.0f;
  const v128_t vscale = wasm_f32x4_splat(B.scale);
  for (std::int64_t e = e0; e < e1; ++e) {
    const scalar::BlockRow row = scalar::block_row(B, e, e0, cos, sin, stride);
    const double *sd = row.sd, *cd = row.cd, p = row.p;
    float *co = row.co, *so = row.so;
    for (std::int64_t i = 0; i < n4; i += 4) {
      v128_t s4, c4;
      rotate4_exact(B.sa, B.ca, sd, cd, i, p, B.F, s4, c4);
      if (scaled) {
        s4 = wasm_f32x4_mul(s4, vscale);
        c4 = wasm_f32x4_mul(c4, vscale);
      }
      if (B.half) {
        wasm_v128_store(co + i, c4);
        wasm_v128_store(co + i + n, c4);
        wasm_v128_store(so + i, s4);
        wasm_v128_store(so + i + n, s4);
      } else {
        wasm_v128_store(co + 2 * i, wasm_i32x4_shuffle(c4, c4, 0, 0, 1, 1));
        wasm_v128_store(co + 2 * i + 4, wasm_i32x4_shuffle(c4, c4, 2, 2, 3, 3));
        wasm_v128_store(so + 2 * i, wasm_i32x4_shuffle(s4, s4, 0, 0, 1, 1));
        wasm_v128_store(so + 2 * i + 4, wasm_i32x4_shuffle(s4, s4, 2, 2, 3, 3));
      }
    }
    for (std::int64_t i = n4; i < n; ++i) {
      cos_sin_one(B, i, sd, cd, p, scaled, co, so);
    }
  }
}

}  // namespace simd
#endif

#if defined(__wasm_simd128__)
namespace rotary_kernel = simd;
#else
namespace rotary_kernel = scalar;
#endif

}  // namespace posenc::detail
