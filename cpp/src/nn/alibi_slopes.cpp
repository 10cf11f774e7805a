// ALiBi's head slopes (see posenc/nn/position_step.hpp). The canonical copy belongs to the ALiBi
// family (cpp/src/alibi/, branch h-rotary); this one is to be merged into it when that lands.
#include <cmath>

#include "posenc/nn/position_step.hpp"

namespace posenc {

namespace {

// get_slopes_power_of_2(n): start = 2^(-2^-(log2 n - 3)) = 2^(-8/n), slope_h = start * start^h,
// the repository's Python float expressions (2 ** x and x ** h are pow) in the same order.
void slopes_power_of_2(std::int64_t n, double* out) {
  const double start = std::pow(2.0, -std::pow(2.0, -(std::log2(static_cast<double>(n)) - 3.0)));
  for (std::int64_t h = 0; h < n; ++h)
    out[h] = start * std::pow(start, static_cast<double>(h));
}

}  // namespace

void alibi_slopes(std::int64_t heads, double* out) {
  std::int64_t p = 1;
  while (p * 2 <= heads)
    p *= 2;
  slopes_power_of_2(p, out);
  if (p == heads) return;
  // get_slopes(2p)[0::2][:heads - p]: slopes of 2p at even indices 0, 2, 4, ...
  const double start =
      std::pow(2.0, -std::pow(2.0, -(std::log2(static_cast<double>(2 * p)) - 3.0)));
  for (std::int64_t i = 0; i < heads - p; ++i)
    out[p + i] = start * std::pow(start, static_cast<double>(2 * i));
}

}  // namespace posenc
