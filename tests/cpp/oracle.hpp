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
// (w_i = posenc::frequency(spec, i), the float64 frequency the spec defines) evaluated in IEEE
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
