// Shared helpers of the rotary tests: float64 references and config texts.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "posenc/posenc.hpp"

namespace rotary_test {

// The positions every precision test covers.
inline const std::vector<double>& key_positions() {
  static const std::vector<double> p = {0, 1, 4095, 4096, 1048579, 16777215};
  return p;
}

// cos and sin of the exact angle p * w (long double: exact product in the wasm builds' binary128,
// within 2^-64 relative natively).
inline double cos_exact(double p, double w) {
  return static_cast<double>(std::cos(static_cast<long double>(p) * w));
}
inline double sin_exact(double p, double w) {
  return static_cast<double>(std::sin(static_cast<long double>(p) * w));
}

// The float64 rotation: pair (x, y) of row position p, frequency w, scaling a.
inline void rotate_f64(double x, double y, double p, double w, double a, double* ox, double* oy) {
  const double c = cos_exact(p, w), s = sin_exact(p, w);
  *ox = a * (x * c - y * s);
  *oy = a * (y * c + x * s);
}

inline posenc::RotarySpec parse_config(const std::string& json) {
  posenc::RotarySpec spec;
  const posenc::EncodingError e =
      posenc::rotary_spec_from_hf_config(json.data(), json.size(), &spec);
  if (!e.ok()) spec.head_dim = -1;
  return spec;
}

inline std::string numbers(std::int64_t n, double first, double step) {
  std::string s = "[";
  for (std::int64_t i = 0; i < n; ++i) {
    if (i) s += ",";
    s += posenc::format_number(first + step * static_cast<double>(i));
  }
  return s + "]";
}

}  // namespace rotary_test
