// ALiBi's head slopes (see posenc/nn/position_step.hpp). The canonical copy belongs to the ALiBi
// family (cpp/src/alibi/, branch h-rotary); this one is to be merged into it when that lands.
#include <cmath>

#include "posenc/nn/position_step.hpp"

namespace posenc {

namespace {

// get_slopes_power_of_2(n) for n = 2^k: start = 2^(-8/n), slope_h = start^(h+1). Without libm's
// pow (about 2 KB of wasm): 2^(-8/n) is exact for n <= 8 and sqrt(sqrt(...(1/2))) (k - 3 square
// roots, each correctly rounded) above; the powers are repeated products. For n <= 8 every slope
// is exact (a power of two); above, within a few ulp of the float64 Python values, which the
// float32 bias rounds away.
void slopes_power_of_2(std::int64_t n, double* out, std::int64_t count, std::int64_t step) {
  int k = 0;
  while ((std::int64_t{1} << k) < n)
    ++k;
  double start = k <= 3 ? std::ldexp(1.0, -(1 << (3 - k))) : 0.5;
  for (int i = 3; i < k; ++i)
    start = std::sqrt(start);
  // out[i] = start^(1 + i * step): get_slopes(n)[0::step][:count]
  double power = start;
  for (std::int64_t i = 0; i < count; ++i) {
    out[i] = power;
    for (std::int64_t s = 0; s < step; ++s)
      power *= start;
  }
}

}  // namespace

void alibi_slopes(std::int64_t heads, double* out) {
  std::int64_t p = 1;
  while (p * 2 <= heads)
    p *= 2;
  slopes_power_of_2(p, out, p, 1);
  // Not a power of two: then get_slopes(2p)[0::2][:heads - p].
  if (p != heads) slopes_power_of_2(2 * p, out + p, heads - p, 2);
}

}  // namespace posenc
