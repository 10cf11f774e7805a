// 2D sin-cos tables (sincos2d.hpp). The 1D sines and cosines come from the shared float64
// machinery (sincos/kernel_f64.hpp: Cody-Waite reduction and fdlibm polynomials), rounded once to
// float32. The sinusoidal encoder is not reused as such: MAE's frequencies are base^(-k/q)
// (q = D/4), taken as real numbers (double-double, as the paper table's), and timm's a float32
// chain, its own frequencies (the tables then equal timm's, not only within the bound).
#include <cmath>
#include <cstring>
#include <string>

#include "hot_entry.hpp"
#include "posenc/sincos2d.hpp"
#include "posenc/sinusoidal/spec.hpp"
#include "sincos/float32_chain.hpp"
#include "sincos/kernel_f64.hpp"
#include "sincos/kernel_math.hpp"
#include "sincos/row_copy.hpp"

namespace posenc {

namespace {

POSENC_SMALL EncodingError bad(const char* name, const std::string& requirement, double got) {
  return encoding_error(EncodingStatus::invalid_argument, name,
                        requirement + ", got " + format_number(got));
}

}  // namespace

POSENC_SMALL EncodingError validate(const Sincos2dSpec& s) {
  if (s.height < 1 || s.height > kMaxSincos2dSide)
    return bad("height", "must be an integer from 1 to 65536", static_cast<double>(s.height));
  if (s.width < 1 || s.width > kMaxSincos2dSide)
    return bad("width", "must be an integer from 1 to 65536", static_cast<double>(s.width));
  if (s.dim < 4 || s.dim > kMaxSincos2dDim || s.dim % 4 != 0)
    return bad("dim",
               "must be a multiple of 4 from 4 to 65536 (the 2D table has sin and cos of two "
               "coordinates)",
               static_cast<double>(s.dim));
  if (s.preset != Sincos2dPreset::mae && s.preset != Sincos2dPreset::timm)
    return encoding_error(EncodingStatus::invalid_argument, "preset", "must be 'mae' or 'timm'");
  if (!std::isfinite(s.base) || s.base <= 1.0)
    return bad("base", "must be a finite number > 1", s.base);
  if (s.preset == Sincos2dPreset::mae && (s.reverse_coord || s.interleave_sin_cos))
    return encoding_error(EncodingStatus::invalid_argument,
                          s.reverse_coord ? "reverseCoord" : "interleaveSinCos",
                          "is a timm option (MAE has one order)");
  const std::int64_t rows = (s.cls_token ? 1 : 0) + s.height * s.width;
  if (rows > kMaxSincos2dElements / s.dim)
    return bad("dim", "times the row count must be at most 2^31 - 1", static_cast<double>(s.dim));
  return {};
}

POSENC_HOT_ENTRY EncodingError Sincos2dTable::init(const Sincos2dSpec& spec) {
  ready_ = false;
  EncodingError e = validate(spec);
  if (!e.ok()) return e;
  const std::int64_t q = spec.dim / 4;      // frequencies
  const std::int64_t qp = (q + 1) / 2 * 2;  // the f64x2 kernel works on pairs
  std::vector<double> w(static_cast<std::size_t>(q)), wp(static_cast<std::size_t>(qp)),
      lo(wp.size());
  if (spec.preset == Sincos2dPreset::mae) {
    // get_1d_sincos_pos_embed_from_grid: omega = arange(D/2 // 2) / (D/2 / 2.) = k / q exactly
    // (D a multiple of 4); 1. / 10000**omega, taken as the real number base^(-k/q) (the paper
    // formula's rule): the paper table's frequencies for 2q columns, heads and tails.
    Spec paper;
    paper.dim = 2 * q;
    paper.base = spec.base;
    posenc::frequencies(paper, w.data(), lo.data());
  } else {
    // freq_bands(pos_dim, temperature, step=1): arange(0, q).to(float32) / q; 1. / (T ** exp)
    for (std::int64_t k = 0; k < q; ++k) {
      const float exponent = detail::div_f32(static_cast<float>(k), static_cast<float>(q));
      const float band = detail::pow_f32(static_cast<float>(spec.base), exponent);
      w[static_cast<std::size_t>(k)] = static_cast<double>(detail::div_f32(1.0f, band));
    }
  }
  const std::int64_t side = spec.height > spec.width ? spec.height : spec.width;
  if (!table_.resize(static_cast<std::size_t>(side * 2 * q)))
    return encoding_error(EncodingStatus::out_of_memory, "dim",
                          "needs more memory than is available");
  std::vector<double> s(wp.size()), c(wp.size());
  std::memcpy(wp.data(), w.data(), static_cast<std::size_t>(q) * sizeof(double));
  detail::SplitFrequencies F;
  F.w = wp.data();
  F.lo = lo.data();
  for (std::int64_t p = 0; p < side; ++p) {
    // Angles p * w <= 65535 * w_0 with w_0 = 1: always within the fast reduction.
    detail::f64_kernel::sincos_f64(F, qp, static_cast<double>(p), s.data(), c.data());
    // Each value the float32 nearest to the exact sin / cos of p w_k (the paper table's rule):
    // the float64 value decides the rounding unless a float32 midpoint lies within its error
    // bound, and then the double-double path does (detail::rounded).
    float* row = table_.data() + p * 2 * q;
    const double pd = static_cast<double>(p);
    for (std::int64_t k = 0; k < q; ++k) {
      const std::size_t i = static_cast<std::size_t>(k);
      row[k] = detail::rounded_at(s[i], pd, F, k, false);
      row[q + k] = detail::rounded_at(c[i], pd, F, k, true);
    }
  }
  spec_ = spec;
  frequencies_ = std::move(w);
  rows_ = (spec.cls_token ? 1 : 0) + spec.height * spec.width;
  ready_ = true;
  return {};
}

POSENC_HOT_ENTRY EncodingError Sincos2dTable::write_rows(std::int64_t first_row,
                                                         std::int64_t row_count, float* out,
                                                         std::size_t out_len) const {
  if (!ready_)
    return encoding_error(EncodingStatus::invalid_argument, "table",
                          "is not initialised (init() did not return ok)");
  if (first_row < 0 || first_row >= rows_)
    return bad("firstRow", "must be from 0 to rows - 1", static_cast<double>(first_row));
  if (row_count < 1 || row_count > rows_ - first_row)
    return bad("rowCount", "must be from 1 to rows - firstRow", static_cast<double>(row_count));
  const std::int64_t dim = spec_.dim, q = dim / 4;
  if (out == nullptr || out_len != static_cast<std::size_t>(row_count * dim))
    return encoding_error(
        EncodingStatus::size_mismatch, "out",
        "must hold rowCount * dim = " + integer_text(row_count * dim) + " floats");
  const std::size_t qn = static_cast<std::size_t>(q);
  const std::int64_t cls = spec_.cls_token ? 1 : 0;
  for (std::int64_t r = 0; r < row_count; ++r) {
    float* o = out + r * dim;
    const std::int64_t t = first_row + r - cls;
    if (t < 0) {
      std::memset(o, 0, static_cast<std::size_t>(dim) * sizeof(float));
      continue;
    }
    if (spec_.preset == Sincos2dPreset::mae) {
      const std::int64_t i = t / spec_.width, j = t % spec_.width;  // grid row, grid column
      detail::copy_floats(o, table_.data() + j * 2 * q, 2 * qn);    // 1d(grid[0] = j): sin, cos
      detail::copy_floats(o + 2 * q, table_.data() + i * 2 * q, 2 * qn);  // 1d(grid[1] = i)
      continue;
    }
    // timm: ndgrid over [height, width] (or [width, height]): t = a * fast + b.
    const std::int64_t fast = spec_.reverse_coord ? spec_.height : spec_.width;
    const float* ta = table_.data() + (t / fast) * 2 * q;  // [sin(a b) | cos(a b)]
    const float* tb = table_.data() + (t % fast) * 2 * q;
    if (spec_.interleave_sin_cos) {
      detail::copy_floats(o, ta, 2 * qn);
      detail::copy_floats(o + 2 * q, tb, 2 * qn);
    } else {
      detail::copy_floats(o, ta, qn);              // sin(a b)
      detail::copy_floats(o + q, tb, qn);          // sin(b b)
      detail::copy_floats(o + 2 * q, ta + q, qn);  // cos(a b)
      detail::copy_floats(o + 3 * q, tb + q, qn);  // cos(b b)
    }
  }
  return {};
}

EncodingError encode_2d(const Sincos2dSpec& spec, float* out, std::size_t out_len) {
  Sincos2dTable table;
  EncodingError e = table.init(spec);
  if (!e.ok()) return e;
  return table.write_rows(0, table.rows(), out, out_len);
}

}  // namespace posenc
