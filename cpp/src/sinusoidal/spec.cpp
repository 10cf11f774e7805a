#include "posenc/sinusoidal/spec.hpp"

#include <cmath>

#include "math/exact_math.hpp"

namespace posenc {

Status validate(const Spec& spec) {
  if (spec.layout != Layout::interleaved && spec.layout != Layout::split) {
    return Status::invalid_layout;
  }
  if (spec.frequencies != Frequencies::paper && spec.frequencies != Frequencies::half) {
    return Status::invalid_frequencies;
  }
  if (spec.odd != OddDim::paper && spec.odd != OddDim::zero_pad && spec.odd != OddDim::reject) {
    return Status::invalid_odd_policy;
  }
  const std::int64_t min_dim = spec.min_dim < 1 ? 1 : spec.min_dim;
  if (spec.dim < min_dim || spec.dim > kMaxDim) return Status::invalid_dim;
  if (spec.odd == OddDim::reject && spec.dim % 2 != 0) return Status::odd_dim_rejected;
  // min_timescale multiplies every frequency: it must keep base / min_timescale and the largest
  // angle (kMaxPosition * min_timescale) finite, or the frequencies would be NaN or infinite.
  if (!std::isfinite(spec.min_timescale) || !(spec.min_timescale > 0.0) ||
      !std::isfinite(spec.min_timescale * kMaxPosition) ||
      (std::isfinite(spec.base) && !std::isfinite(spec.base / spec.min_timescale))) {
    return Status::invalid_min_timescale;
  }
  if (!std::isfinite(spec.base) || !(spec.base > 1.0) || !(spec.base > spec.min_timescale)) {
    return Status::invalid_base;
  }
  return Status::ok;
}

Columns columns_of(const Spec& spec) {
  Columns c;
  const std::int64_t half = spec.dim / 2;
  c.cosines = half;
  if (spec.dim % 2 == 0) {
    c.sines = half;
  } else if (spec.odd == OddDim::zero_pad) {
    c.sines = half;
    c.zeros = 1;
  } else {
    c.sines = half + 1;
  }
  return c;
}

namespace {

// The exponent e_i as the exact rational numerator / denominator (both integers below 2^17).
void exponent_of(const Spec& spec, std::int64_t i, double& numerator, double& denominator) {
  if (spec.frequencies == Frequencies::paper) {
    numerator = 2.0 * static_cast<double>(i);
    denominator = static_cast<double>(spec.dim);
  } else {
    const std::int64_t n = columns_of(spec).sines;
    numerator = static_cast<double>(i);
    denominator = n > 1 ? static_cast<double>(n - 1) : 1.0;
  }
}

// ln(b / m) for the two kinds of frequency: the float64 of posenc 0.2 (log of the rounded
// quotient) or the double-double ln b - ln m of the exact quotient.
struct LogRange {
  double rounded = 0.0;
  math::DD exact{0.0, 0.0};
};

LogRange log_range_of(const Spec& spec) {
  LogRange r;
  if (spec.exact_frequencies) {
    r.exact = spec.min_timescale == 1.0
                  ? math::log_dd(spec.base)
                  : math::add(math::log_dd(spec.base), math::neg(math::log_dd(spec.min_timescale)));
  } else {
    r.rounded = math::log(spec.base / spec.min_timescale);
  }
  return r;
}

// w_i = m (b / m)^(-e_i) = hi + lo. Exact: e_i ln(b / m) in double-double from the exact rational
// (a product by an integer and a division, each within 2^-104), then exp_dd (2^-100) and the
// product by m; when (b / m)^(-e_i) itself would leave the float64 range (b / m above 2^700), the
// same as exp(ln m - e_i ln(b / m)). Rounded: the float64 steps of posenc 0.2, lo = 0.
math::DD frequency_in(const Spec& spec, std::int64_t i, const LogRange& range) {
  double numerator, denominator;
  exponent_of(spec, i, numerator, denominator);
  if (!spec.exact_frequencies) {
    const double exponent = numerator / denominator;
    return {spec.min_timescale * math::exp(-exponent * range.rounded), 0.0};
  }
  const math::DD x = math::div_d(math::mul_d(range.exact, numerator), denominator);
  if (x.hi <= 700.0) {
    const math::DD power = math::exp_dd(math::neg(x));
    return spec.min_timescale == 1.0 ? power : math::mul_d(power, spec.min_timescale);
  }
  return math::exp_dd(math::add(math::log_dd(spec.min_timescale), math::neg(x)));
}

}  // namespace

double frequency(const Spec& spec, std::int64_t i) {
  return frequency_in(spec, i, log_range_of(spec)).hi;
}

void frequencies(const Spec& spec, double* out, double* out_lo) {
  const LogRange range = log_range_of(spec);
  const std::int64_t n = columns_of(spec).sines;
  for (std::int64_t i = 0; i < n; ++i) {
    const math::DD w = frequency_in(spec, i, range);
    out[i] = w.hi;
    if (out_lo != nullptr) out_lo[i] = w.lo;
  }
}

namespace {
bool position_ok(double p) {
  return std::isfinite(p) && p >= 0.0 && p <= kMaxPosition;
}
}  // namespace

Status validate(const Spec& spec, const RowPositions& rows) {
  if (Status s = validate(spec); s != Status::ok) return s;
  return validate_rows(spec, rows);
}

Status validate_rows(const Spec& spec, const RowPositions& rows) {
  if (rows.count < 1 || rows.count > kMaxElements / spec.dim) return Status::invalid_length;
  if (rows.positions != nullptr) {
    for (std::int64_t r = 0; r < rows.count; ++r) {
      if (!position_ok(rows.positions[r])) return Status::invalid_position;
    }
  } else {
    const double last = rows.first_position + static_cast<double>(rows.count - 1);
    if (!position_ok(rows.first_position) || !position_ok(last)) return Status::invalid_position;
  }
  return Status::ok;
}

Status positions_from_padding_mask(const std::uint8_t* padding_mask, std::int64_t count,
                                   std::int64_t padding_idx, std::int64_t previous, double* out) {
  if (padding_idx < 0 || padding_idx >= static_cast<std::int64_t>(kMaxPosition)) {
    return Status::invalid_padding_idx;
  }
  if (count < 1 || count > kMaxElements) return Status::invalid_length;
  if (previous < 0) return Status::invalid_position;
  return number_around_padding(padding_mask, count,
                               static_cast<double>(padding_idx) + static_cast<double>(previous) + 1,
                               static_cast<double>(padding_idx), out);
}

Status number_around_padding(const std::uint8_t* padding_mask, std::int64_t count, double first,
                             double padding_position, double* out) {
  if (count < 1 || count > kMaxElements) return Status::invalid_length;
  if (!(first >= 0.0) || !position_ok(padding_position)) return Status::invalid_position;
  std::int64_t non_padding = 0;
  for (std::int64_t r = 0; r < count; ++r)
    non_padding += padding_mask[r] ? 0 : 1;
  if (non_padding > 0 && !(first + static_cast<double>(non_padding - 1) <= kMaxPosition)) {
    return Status::invalid_position;
  }
  double next = first;
  for (std::int64_t r = 0; r < count; ++r) {
    if (padding_mask[r]) {
      out[r] = padding_position;
    } else {
      out[r] = next;
      next += 1;
    }
  }
  return Status::ok;
}

}  // namespace posenc
