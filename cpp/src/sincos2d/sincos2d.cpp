// 2D sin-cos tables (sincos2d.hpp). The 1D sines and cosines come from the shared float64
// machinery (sincos/kernel_f64.hpp: Cody-Waite reduction and fdlibm polynomials), rounded once to
// float32. The sinusoidal encoder is not reused as such: MAE's frequencies are base^(-k/q)
// (q = D/4), taken as real numbers (double-double, as the paper table's), and timm's a float32
// chain, its own frequencies (the tables then equal timm's, not only within the bound).
#include <cmath>
#include <cstdint>
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
  low_ = std::move(lo);
  half_[0].resize(0);
  half_[1].resize(0);
  rows_ = (spec.cls_token ? 1 : 0) + spec.height * spec.width;
  ready_ = true;
  return {};
}

namespace {
// Copies n values of `width` bytes: the float rows' SIMD copy, or a plain loop of 16-bit values
// (kept small: one row loop serves both widths).
[[gnu::noinline]] POSENC_SMALL void copy_halves(std::uint16_t* dst, const std::uint16_t* src,
                                                std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    dst[i] = src[i];
}
inline void copy_values(unsigned char* dst, const unsigned char* src, std::size_t n,
                        std::size_t width) {
  // 16-bit values in pairs on 4-byte boundaries (every row but timm's split halves of odd dim / 4)
  // take the float copy too.
  const bool pairs =
      width == 2 && n % 2 == 0 &&
      (reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src)) % 4 == 0;
  if (width == sizeof(float) || pairs) {
    detail::copy_floats(reinterpret_cast<float*>(dst), reinterpret_cast<const float*>(src),
                        pairs ? n / 2 : n);
  } else {
    copy_halves(reinterpret_cast<std::uint16_t*>(dst), reinterpret_cast<const std::uint16_t*>(src),
                n);
  }
}
}  // namespace

EncodingError Sincos2dTable::write_rows(std::int64_t first_row, std::int64_t row_count, float* out,
                                        std::size_t out_len) const {
  return rows_from(reinterpret_cast<const unsigned char*>(table_.data()), sizeof(float), first_row,
                   row_count, reinterpret_cast<unsigned char*>(out), out_len);
}

EncodingError Sincos2dTable::write_rows(std::int64_t first_row, std::int64_t row_count,
                                        std::uint16_t* out, std::size_t out_len,
                                        HalfFormat format) const {
  Buffer<std::uint16_t>& h = half_[format == HalfFormat::bfloat16 ? 1 : 0];
  if (ready_ && h.size() == 0) {
    // The 1D table (coordinate p: q sines, q cosines) rounded once: its float32 values are the
    // nearest to the exact ones, so only float16 / bf16 midpoints need the exact side.
    const std::size_t n = table_.size(), q = frequencies_.size();
    Buffer<std::uint32_t> mids;
    if (!h.resize_for_overwrite(n) || !mids.resize_for_overwrite(n))
      return encoding_error(EncodingStatus::out_of_memory, "dim",
                            "needs more memory than is available");
    const std::size_t count = to_half(table_.data(), h.data(), n, format, mids.data());
    for (std::size_t m = 0; m < count; ++m) {
      const std::size_t i = mids.data()[m], p = i / (2 * q), k = i % (2 * q) % q;
      const float f = table_.data()[i];
      const int side =
          detail::exact_side(static_cast<double>(p), frequencies_[k], low_[k], i % (2 * q) >= q, f);
      if (side == kSideUndecided) {
        h.resize(0);
        return encoding_error(EncodingStatus::invalid_argument, "dtype",
                              "cannot decide the 16-bit rounding of a value (please report it)");
      }
      h.data()[i] = half_bits_for_side(f, side, format);
    }
  }
  return rows_from(reinterpret_cast<const unsigned char*>(h.data()), sizeof(std::uint16_t),
                   first_row, row_count, reinterpret_cast<unsigned char*>(out), out_len);
}

POSENC_HOT_ENTRY EncodingError Sincos2dTable::rows_from(const unsigned char* table,
                                                        std::size_t width, std::int64_t first_row,
                                                        std::int64_t row_count, unsigned char* out,
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
        "must hold rowCount * dim = " + integer_text(row_count * dim) + " values");
  const std::size_t qn = static_cast<std::size_t>(q);
  const std::int64_t cls = spec_.cls_token ? 1 : 0;
  const std::int64_t w = static_cast<std::int64_t>(width);  // bytes per value
  for (std::int64_t r = 0; r < row_count; ++r) {
    unsigned char* o = out + r * dim * w;
    const std::int64_t t = first_row + r - cls;
    if (t < 0) {
      std::memset(o, 0, static_cast<std::size_t>(dim * w));
      continue;
    }
    if (spec_.preset == Sincos2dPreset::mae) {
      const std::int64_t i = t / spec_.width, j = t % spec_.width;  // grid row, grid column
      copy_values(o, table + j * 2 * q * w, 2 * qn, width);         // 1d(grid[0] = j): sin, cos
      copy_values(o + 2 * q * w, table + i * 2 * q * w, 2 * qn, width);  // 1d(grid[1] = i)
      continue;
    }
    // timm: ndgrid over [height, width] (or [width, height]): t = a * fast + b.
    const std::int64_t fast = spec_.reverse_coord ? spec_.height : spec_.width;
    const unsigned char* ta = table + (t / fast) * 2 * q * w;  // [sin(a b) | cos(a b)]
    const unsigned char* tb = table + (t % fast) * 2 * q * w;
    if (spec_.interleave_sin_cos) {
      copy_values(o, ta, 2 * qn, width);
      copy_values(o + 2 * q * w, tb, 2 * qn, width);
    } else {
      copy_values(o, ta, qn, width);                      // sin(a b)
      copy_values(o + q * w, tb, qn, width);              // sin(b b)
      copy_values(o + 2 * q * w, ta + q * w, qn, width);  // cos(a b)
      copy_values(o + 3 * q * w, tb + q * w, qn, width);  // cos(b b)
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
