// Internal: sin and cos of one float64 angle without libm (whose sin/cos and their large-argument
// reduction, __rem_pio2, would add about 4 KB to the wasm): the project's float64 sincos
// (kernel_f64.hpp; error below 2^-53 absolute) after a reduction modulo 2 pi as a double-double
// above kReduceLimit (as rotary_detail::sincos_any; exact while nearest(|x| / 2 pi) < 2^52; larger
// angles, which a huge min_timescale can give, are reduced by fmod). NaN for non-finite angles.
#pragma once

#include <cmath>
#include <limits>

#include "sincos/kernel_f64.hpp"

namespace posenc::detail {

inline void sincos_double(double x, double& s, double& c) {
  const double a = std::fabs(x);
  if (!(a <= std::numeric_limits<double>::max())) {
    s = c = std::numeric_limits<double>::quiet_NaN();
    return;
  }
  double r = a;
  constexpr double kTwoPiHi = 0x1.921fb54442d18p+2, kTwoPiLo = 0x1.1a62633145c07p-52;
  if (a / kTwoPiHi >= 0x1p52) {
    // k would not be exact: reduce by the float64 2 pi exactly (fmod has no rounding). Angles this
    // large (a huge min_timescale) carry no precision anyway; the result stays in [-1, 1].
    r = std::fmod(a, kTwoPiHi);
  } else if (a > kReduceLimit) {
    const double k = std::nearbyint(a / kTwoPiHi);
    double kh, kl, th, tl;
    split(k, kh, kl);
    split(kTwoPiHi, th, tl);
    const double prod = k * kTwoPiHi;
    const double prod_err = ((kh * th - prod) + kh * tl + kl * th) + kl * tl;
    r = ((a - prod) - prod_err) - k * kTwoPiLo;
    if (r < 0) r += kTwoPiHi;
  }
  const double one = 1.0;
  scalar::sincos_row(SplitFrequencies{&one}, 1, r, &s, &c);
  if (x < 0) s = -s;
}

}  // namespace posenc::detail
