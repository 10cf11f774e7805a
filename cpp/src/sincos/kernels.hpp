// Internal: the row kernels behind SinusoidalEncoder::encode/add_to/concat. Two implementations
// with the same contract: `scalar` (portable C++, used natively and by the wasm baseline build) and
// `simd` (wasm SIMD128 intrinsics, kernel_simd.hpp, used by the -msimd128 build). Arrays of
// frequencies and of per-frequency values are padded to a multiple of 4 entries (kernel_pad) with
// copies of the last frequency.
//
// Every kernel writes a row in the layout L describes; with add = true it computes
// out[c] = out[c] * scale + value instead of storing.
#pragma once

#include <cstdint>

#include "posenc/sinusoidal/spec.hpp"
#include "sincos/kernel_math.hpp"

namespace posenc::detail {

inline std::int64_t kernel_pad(std::int64_t n) {
  return (n + 3) / 4 * 4;
}

// Where a spec's rows put their sines and cosines (columns = columns_of(spec)).
inline RowLayout row_layout(const Spec& spec, const Columns& columns) {
  RowLayout L;
  L.sines = columns.sines;
  L.cosines = columns.cosines;
  L.dim = spec.dim;
  L.interleaved = spec.layout == Layout::interleaved;
  L.zero_column = columns.zeros != 0;
  return L;
}

namespace scalar {

// s[i] = sin(p w_i), c[i] = cos(p w_i) for i < n (n a multiple of 4) in float64, within 2^-53
// absolute of the values at the exact angle p w_i (kernel_math.hpp, steps 1-3): the anchors and
// the angle-addition table. Requires 0 <= p w_i <= kReduceLimit.
void sincos_row(const SplitFrequencies& F, std::int64_t n, double p, double* s, double* c);

// Row PE(p), every value the correctly rounded float32 (steps 1-4), before the add.
// Requires 0 <= p w_0 <= kReduceLimit and w_0 the largest frequency.
void direct_row(const RowLayout& L, const SplitFrequencies& F, double p, bool add, float scale,
                float* out);

// Rows PE(a + d) into plus and PE(a - d) into minus by angle addition in float64 from the anchor
// (sa, ca) = (sin, cos)(a w) and the step (sd, cd) = (sin, cos)(d w), all from sincos_row():
// sin(a +- d) = sa cd +- ca sd, cos(a +- d) = ca cd -+ sa sd, each rounded to float32 with the
// hard-case test (error below 2^-50 before rounding, see encode.cpp), hard cases recomputed by
// rounded_exact at positions a + d and a - d. Every value is the correctly rounded float32, so in
// [-1, 1].
void rotate_rows(const RowLayout& L, const SplitFrequencies& F, const double* sa, const double* ca,
                 const double* sd, const double* cd, double a, double d, bool add, float scale,
                 float* plus, float* minus);

// One row of rotate_rows: PE(a + d) when minus = false, PE(a - d) when true (one-row calls).
void rotate_row(const RowLayout& L, const SplitFrequencies& F, const double* sa, const double* ca,
                const double* sd, const double* cd, double a, double d, bool minus, bool add,
                float scale, float* out);

}  // namespace scalar
}  // namespace posenc::detail

// The kernels this build runs: wasm SIMD under -msimd128, the portable ones otherwise.
#if defined(__wasm_simd128__)
#include "sincos/kernel_simd.hpp"
namespace posenc::detail {
namespace kernel = simd;
}
#else
namespace posenc::detail {
namespace kernel = scalar;
}
#endif
