// Internal: a frequency set of RotaryEmbedding (its frequencies, attention scaling and the float64
// step table of one block), shared by rotary.cpp (construction, checks: run once per object or
// call, compiled for size in the wasm) and rotary_rows.cpp (the per-row loops, compiled -O3).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "posenc/buffer.hpp"
#include "posenc/rotary/rotary.hpp"
#include "rotary/kernels.hpp"

namespace posenc {

namespace rotary_detail {

inline constexpr std::int64_t kBlock = 32;
// Frequency sets above this many (padded) pairs get no step table (it would exceed 1 MB): their
// rows are computed directly.
inline constexpr std::int64_t kMaxTablePairs = 2048;
// Frequency sets up to this many (padded) pairs keep a row's scratch on the stack (6 KB).
inline constexpr std::int64_t kStackPairs = 256;

inline std::int64_t pad4(std::int64_t n) {
  return (n + 3) / 4 * 4;
}

// sin and cos of p w >= 0 in float64: the fast reduction (of the exact product) below 2^31;
// above, p w is first reduced modulo 2 pi (k = nearest(p w / 2 pi) below 2^53 for validated
// specs: p < 2^31, w <= 1e6; k * 2 pi exact as a double-double) and then evaluated the same way.
// No libm sin/cos: their large-argument reduction would add about 5 KB to the wasm, for angles
// whose float64 value is already off by more than a float32 ulp.
inline void sincos_any(double p, double w, double wlo, double& s, double& c) {
  if (p * w <= detail::kReduceLimit) {
    detail::SplitFrequencies F;  // one frequency through the shared (not inlined) row function
    F.w = &w;
    F.lo = &wlo;
    detail::scalar::sincos_row(F, 1, p, &s, &c);
    return;
  }
  constexpr double kTwoPiHi = 0x1.921fb54442d18p+2, kTwoPiLo = 0x1.1a62633145c07p-52;
  const double x = p * w;
  const double k = std::nearbyint(x / kTwoPiHi);
  double kh, kl, th, tl;
  detail::split(k, kh, kl);
  detail::split(kTwoPiHi, th, tl);
  const double prod = k * kTwoPiHi;
  const double prod_err = ((kh * th - prod) + kh * tl + kl * th) + kl * tl;
  double r = ((x - prod) - prod_err) - k * kTwoPiLo;
  if (r < 0) r += kTwoPiHi;
  sincos_any(r, 1.0, 0.0, s, c);
}

// Validated specs give finite frequencies >= 0; checked again so that no kernel ever sees others.
inline EncodingError check_frequencies(const std::vector<double>& inv) {
  for (double w : inv)
    if (!(w >= 0 && w < 1e300))
      return encoding_error(EncodingStatus::invalid_argument, "scaling",
                            "gives frequencies that are not finite numbers >= 0");
  return {};
}

inline EncodingError out_of_memory() {
  return encoding_error(EncodingStatus::out_of_memory, "length",
                        "needs more memory than is available");
}

}  // namespace rotary_detail

struct RotaryEmbedding::AngleSet {
  // Builds the set; false when out of memory.
  std::int64_t n = 0, np = 0;  // pairs, padded to a multiple of 4
  std::vector<double> inv;     // the n frequencies (public)
  Buffer<double> w;            // np, zero-padded
  // The tails of real frequencies (explicit options without scaling: base^(-2i/d) as a real
  // number, w + lo), np, zero-padded; empty for float64 / float32 frequencies.
  Buffer<double> lo;
  double w_max = 0;
  double attention = 1.0;
  std::int64_t blocks = 1;  // step table rows: kBlock, or 1 (only the identity e = 0)
  Buffer<double> step_s, step_c;

  bool has_tails() const { return lo.size() != 0; }

  // The kernels' view of the frequencies.
  detail::SplitFrequencies split() const {
    detail::SplitFrequencies F;
    F.w = w.data();
    if (has_tails()) F.lo = lo.data();
    return F;
  }

  bool build(std::vector<double> frequencies, const std::vector<double>& tails,
             double attention_scaling, bool with_table) {
    inv = std::move(frequencies);
    n = static_cast<std::int64_t>(inv.size());
    np = rotary_detail::pad4(n);
    attention = attention_scaling;
    blocks = with_table && np <= rotary_detail::kMaxTablePairs ? rotary_detail::kBlock : 1;
    const auto size = [](std::int64_t v) { return static_cast<std::size_t>(v); };
    if (!w.resize(size(np)) || !step_s.resize(size(blocks * np)) ||
        !step_c.resize(size(blocks * np)))
      return false;
    if (!tails.empty() && !lo.resize(size(np))) return false;
    w_max = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      w.data()[i] = inv[size(i)];
      if (!tails.empty()) lo.data()[i] = tails[size(i)];
      w_max = std::max(w_max, inv[size(i)]);
    }
    const detail::SplitFrequencies F = split();
    for (std::int64_t e = 0; e < blocks; ++e)
      for (std::int64_t i = 0; i < np; ++i)
        rotary_detail::sincos_any(static_cast<double>(e), F.w[i], F.low(i),
                                  step_s.data()[e * np + i], step_c.data()[e * np + i]);
    return true;
  }
};

}  // namespace posenc
