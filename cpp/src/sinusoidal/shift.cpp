// The shift rotation M_k with PE(p + k) = M_k PE(p).
#include <cmath>
#include <cstring>

#include "posenc/sinusoidal/encode.hpp"
#include "posenc/sinusoidal/encoder.hpp"
#include "sincos/sincos_double.hpp"

namespace posenc {

namespace {

Status check_shift(const Spec& spec, double k) {
  if (Status s = validate(spec); s != Status::ok) return s;
  if (spec.dim % 2 != 0 && spec.odd == OddDim::paper) return Status::unsupported_shift;
  if (!std::isfinite(k) || std::fabs(k) > kMaxPosition) return Status::invalid_shift;
  return Status::ok;
}

// Column of sine i and of cosine i under the spec's layout.
void pair_columns(const SinusoidalEncoder& t, std::int64_t i, std::int64_t* sine,
                  std::int64_t* cosine) {
  if (t.spec().layout == Layout::interleaved) {
    *sine = 2 * i;
    *cosine = 2 * i + 1;
  } else {
    *sine = i;
    *cosine = t.columns().sines + i;
  }
}

}  // namespace

Status shift_blocks(const Spec& spec, double k, float* out, std::size_t out_len) {
  if (Status s = check_shift(spec, k); s != Status::ok) return s;
  const SinusoidalEncoder t(spec);
  if (out == nullptr || out_len != static_cast<std::size_t>(2 * t.columns().sines)) {
    return Status::size_mismatch;
  }
  for (std::int64_t i = 0; i < t.columns().sines; ++i) {
    const double angle = k * t.frequencies().data()[i];
    double sa, ca;
    detail::sincos_double(angle, sa, ca);
    out[2 * i] = static_cast<float>(ca);
    out[2 * i + 1] = static_cast<float>(sa);
  }
  return Status::ok;
}

Status shift_matrix(const Spec& spec, double k, float* out, std::size_t out_len) {
  if (Status s = check_shift(spec, k); s != Status::ok) return s;
  const std::int64_t d = spec.dim;
  // d * d as a 64-bit count: in wasm32 a size_t of 65536^2 would wrap to 0.
  if (out == nullptr || static_cast<std::uint64_t>(out_len) != static_cast<std::uint64_t>(d * d))
    return Status::size_mismatch;
  const SinusoidalEncoder t(spec);
  std::memset(out, 0, sizeof(float) * out_len);
  for (std::int64_t i = 0; i < t.columns().sines; ++i) {
    const double angle = k * t.frequencies().data()[i];
    double sa, ca;
    detail::sincos_double(angle, sa, ca);
    const float c = static_cast<float>(ca);
    const float s = static_cast<float>(sa);
    std::int64_t sine_col, cosine_col;
    pair_columns(t, i, &sine_col, &cosine_col);
    // sin((p+k)w) = cos(kw) sin(pw) + sin(kw) cos(pw); cos((p+k)w) = -sin(kw) sin(pw) + cos(kw)
    // cos(pw)
    out[sine_col * d + sine_col] = c;
    out[sine_col * d + cosine_col] = s;
    out[cosine_col * d + sine_col] = -s;
    out[cosine_col * d + cosine_col] = c;
  }
  return Status::ok;
}

}  // namespace posenc
