// Internal: the row kernels behind SinusoidalEncoder::encode/add_to/concat. Two implementations
// with the same contract: `scalar` (portable C++, used natively and by the wasm baseline build) and
// `simd` (wasm SIMD128 intrinsics, kernel_simd.hpp, used by the -msimd128 build). Arrays of
// frequencies and of per-frequency values are padded to a multiple of 4 entries (kernel_pad);
// padding frequencies are 0.
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

// s[i] = sin(p * w[i]), c[i] = cos(p * w[i]) for i < n (n a multiple of 4), evaluated in float64
// (error below 2^-50) and rounded to float32 with s[i]^2 + c[i]^2 <= 1 (unit_pair: each value
// within one float32 ulp). Requires 0 <= p * w[i] <= kReduceLimit.
void anchors(const double* w, std::int64_t n, double p, float* s, float* c);

// Row PE(p) from one float64-reduced float32 sincos per frequency (error below 3 * 2^-25 before
// the add). Requires 0 <= p * w[0] <= kReduceLimit and w[0] the largest frequency.
void direct_row(const RowLayout& L, const double* w, double p, bool add, float scale, float* out);

// Rows PE(a + d) into plus and PE(a - d) into minus by angle addition from the anchor
// (sa, ca) = (sin, cos)(a w) and the step (sd, cd) = (sin, cos)(d w), all float32 from anchors():
// sin(a +- d) = sa cd +- ca sd, cos(a +- d) = ca cd -+ sa sd. Both rows are always written (pass
// a spare row for the one not wanted); their values are in [-1, 1] without clamping (unit_pair).
void rotate_rows(const RowLayout& L, const float* sa, const float* ca, const float* sd,
                 const float* cd, bool add, float scale, float* plus, float* minus);

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
