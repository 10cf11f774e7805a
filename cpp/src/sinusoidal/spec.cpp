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
double frequency_in(const Spec& spec, std::int64_t i, double log_range) {
  double exponent;
  if (spec.frequencies == Frequencies::paper) {
    exponent = 2.0 * static_cast<double>(i) / static_cast<double>(spec.dim);
  } else {
    const std::int64_t n = columns_of(spec).sines;
    const double denominator = n > 1 ? static_cast<double>(n - 1) : 1.0;
    exponent = static_cast<double>(i) / denominator;
  }
  return spec.min_timescale * math::exp(-exponent * log_range);
}
}  // namespace

double frequency(const Spec& spec, std::int64_t i) {
  return frequency_in(spec, i, math::log(spec.base / spec.min_timescale));
}

void frequencies(const Spec& spec, double* out) {
  const double log_range = math::log(spec.base / spec.min_timescale);
  const std::int64_t n = columns_of(spec).sines;
  for (std::int64_t i = 0; i < n; ++i)
    out[i] = frequency_in(spec, i, log_range);
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
