// The portable kernels (kernels.hpp): plain loops over frequencies, four at a time so the
// structure (and the tail handling) matches the SIMD kernels.
#include "sincos/kernels.hpp"

namespace posenc::detail::scalar {

namespace {

template <bool Add, bool Interleaved>
inline void put_group(const RowLayout& L, std::int64_t i, const float* s, const float* c,
                      float scale, float* out) {
  for (int k = 0; k < 4; ++k) {
    if constexpr (Interleaved) {
      put<Add>(out + 2 * (i + k), s[k], scale);
      put<Add>(out + 2 * (i + k) + 1, c[k], scale);
    } else {
      put<Add>(out + i + k, s[k], scale);
      put<Add>(out + L.sines + i + k, c[k], scale);
    }
  }
}

// Calls group(i, s, c) to fill 4 sines and cosines of frequencies i..i+3, for every group, and
// writes them: whole groups while both columns exist, then the tail and the zero column.
template <bool Add, bool Interleaved, class Group>
inline void write_row(const RowLayout& L, float scale, float* out, Group group) {
  float s[4], c[4];
  std::int64_t i = 0;
  for (; i + 4 <= L.cosines; i += 4) {
    group(i, s, c);
    put_group<Add, Interleaved>(L, i, s, c, scale, out);
  }
  if (i < L.sines) group(i, s, c);
  put_tail<Add>(L, i, s, c, scale, out);
}

template <class Group>
inline void dispatch(const RowLayout& L, bool add, float scale, float* out, Group group) {
  if (add) {
    if (L.interleaved) {
      write_row<true, true>(L, scale, out, group);
    } else {
      write_row<true, false>(L, scale, out, group);
    }
  } else if (L.interleaved) {
    write_row<false, true>(L, scale, out, group);
  } else {
    write_row<false, false>(L, scale, out, group);
  }
}

}  // namespace

void anchors(const double* w, std::int64_t n, double p, float* s, float* c) {
  for (std::int64_t i = 0; i < n; ++i) {
    double k, sr, cr;
    sincos_reduced_f64(reduce_pio2(p * w[i], k), sr, cr);
    float fs, fc;
    unit_pair(sr, cr, fs, fc);
    apply_quadrant(static_cast<std::int64_t>(k), fs, fc, s[i], c[i]);
  }
}

void direct_row(const RowLayout& L, const double* w, double p, bool add, float scale, float* out) {
  dispatch(L, add, scale, out, [&](std::int64_t i, float* s, float* c) {
    for (int k = 0; k < 4; ++k)
      sincos_f32(p * w[i + k], s[k], c[k]);
  });
}

void rotate_rows(const RowLayout& L, const float* sa, const float* ca, const float* sd,
                 const float* cd, bool add, float scale, float* plus, float* minus) {
  // x = sa cd, y = ca sd, z = ca cd, v = sa sd: PE(a + d) = (x + y, z - v), PE(a - d) = (x - y,
  // z + v). Written as two passes; the SIMD kernel shares the products (same values).
  dispatch(L, add, scale, plus, [&](std::int64_t i, float* s, float* c) {
    for (int k = 0; k < 4; ++k) {
      s[k] = sa[i + k] * cd[i + k] + ca[i + k] * sd[i + k];
      c[k] = ca[i + k] * cd[i + k] - sa[i + k] * sd[i + k];
    }
  });
  dispatch(L, add, scale, minus, [&](std::int64_t i, float* s, float* c) {
    for (int k = 0; k < 4; ++k) {
      s[k] = sa[i + k] * cd[i + k] - ca[i + k] * sd[i + k];
      c[k] = ca[i + k] * cd[i + k] + sa[i + k] * sd[i + k];
    }
  });
}

}  // namespace posenc::detail::scalar
