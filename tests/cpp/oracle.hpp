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

}  // namespace oracle
