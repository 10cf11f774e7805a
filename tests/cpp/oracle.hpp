// Test helpers: an independent float64 oracle written from the formulas, not from the library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "posenc/posenc.hpp"

namespace oracle {

// The float64 value of column `col` at absolute position p, straight from the definitions in
// spec.hpp (frequencies, layout, odd-dim policy), independent of the library's code paths.
double value(const posenc::Spec& spec, double p, std::int64_t col);

// A whole table from the oracle, rows at the given positions.
std::vector<double> table(const posenc::Spec& spec, const std::vector<double>& positions);

// Max |a - b| over two equally long arrays.
double max_abs_diff(const std::vector<float>& a, const std::vector<double>& b);

// posenc::encode for explicit positions; REQUIREs ok.
std::vector<float> encode_at(const posenc::Spec& spec, const std::vector<double>& positions);

// The precision bound of encode.hpp: 2^-22.
inline constexpr double kBound = 1.0 / 4194304.0;

std::string describe(const posenc::Spec& spec);

// The correctly rounded value of one column, from sin/cos of the exact product p * w_i
// (w_i = real_frequency(spec, i) for a spec with exact_frequencies, else
// posenc::frequency(spec, i), the float64 frequency the spec defines) evaluated in IEEE
// quad precision (natively __float128 with libquadmath, under wasm long double), relative error
// about 2^-110. `tie` marks values whose exact value lies within 2^-58 |v| + 2^-72 of a float32
// midpoint: there the library may return either neighbour (kernel_math.hpp, step 4), `other`.
struct Rounded {
  float value = 0.0f;
  float other = 0.0f;
  bool tie = false;
};
Rounded rounded(const posenc::Spec& spec, double p, std::int64_t col);
// The same for sin (cosine = false) or cos of the exact p * w.
Rounded rounded_sin_cos(double p, double w, bool cosine);

// The frequency w_i of a spec with exact_frequencies, the real number m (b / m)^(-e_i), in quad
// precision from this file's own exp and log series (not the library's double-double, nor libm's
// expl / logl, which musl implements only to double precision for quad long double): relative
// error below 2^-101 (measured against libquadmath: the quad rounding of x = k ln 2 + r and the
// squarings). The numbers are returned as their float64 head and tail (hi + lo, the tail rounded
// to float64: about 2^-106 relative, below the series' own error). And the same series' exp and log, for the test that
// holds them to libquadmath natively.
struct QuadFrequency {
  double hi = 0.0, lo = 0.0;
};
QuadFrequency real_frequency(const posenc::Spec& spec, std::int64_t i);
double series_exp_error(double x);  // |series exp(x) / libquadmath expq(x) - 1| (native only)
double series_log_error(double x);  // |series log(x) - logq(x)| / |logq(x)| (native only)

// sin or cos of p (hi + lo) rounded, as rounded_sin_cos: the frequency a real number.
Rounded rounded_sin_cos(double p, QuadFrequency w, bool cosine);
// |v - sin(p w)| or |v - cos(p w)| for that real frequency.
double error_of(double v, double p, QuadFrequency w, bool cosine);

// |v - sin(p * w)| (cosine = false) or |v - cos(p * w)|, the product exact, in quad precision.
double error_of(double v, double p, double w, bool cosine);

// Whether got is the correctly rounded value (or, for a tie, either neighbour).
inline bool acceptable(float got, const Rounded& want) {
  return got == want.value || (want.tie && got == want.other);
}

// Compares a table (rows at positions) with rounded(): returns the number of values that are not
// acceptable, adds the ties to *ties; reports the first few mismatches through INFO-free printf.
std::int64_t count_misrounded(const posenc::Spec& spec, const std::vector<double>& positions,
                              const std::vector<float>& table, std::int64_t* ties = nullptr);

}  // namespace oracle
