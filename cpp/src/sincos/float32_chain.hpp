// Internal: correctly rounded float32 arithmetic, to reproduce a framework's float32 frequency
// chain (Hugging Face's RoPE inv_freq, timm's freq_bands) bit for bit as IEEE arithmetic would
// give it, independent of the libm the wasm or native build links.
//
// +, -, *, / and sqrt: computed in float64 and rounded once to float32. That is the correctly
// rounded float32 result (double has more than 2 * 24 + 2 significant bits, so the double rounding
// is innocuous: Figueroa, "When is double rounding innocuous?", 1995).
//
// pow: the float64 pow of math/exact_math.hpp (correctly rounded, the same on every build) is
// within 2^-53 relative of b^e, so its rounding to float32 is right unless b^e lies within ~2^-53
// relative of a float32 midpoint. pow_f32 detects a float64 result within 2^-44 relative of a
// midpoint and then decides the side with double-double logarithms (pow_exceeds, ~2^-100
// accurate): integer and half-integer exponents, where b^e may be exactly a midpoint, are computed
// exactly instead.
#pragma once

namespace posenc::detail {

inline float add_f32(float a, float b) {
  return static_cast<float>(static_cast<double>(a) + static_cast<double>(b));
}
inline float sub_f32(float a, float b) {
  return static_cast<float>(static_cast<double>(a) - static_cast<double>(b));
}
inline float mul_f32(float a, float b) {
  return static_cast<float>(static_cast<double>(a) * static_cast<double>(b));
}
inline float div_f32(float a, float b) {
  return static_cast<float>(static_cast<double>(a) / static_cast<double>(b));
}

// The correctly rounded float32 of base^exponent, for base > 0 finite and exponent finite
// (results that overflow or underflow float32 are inf or the float32 rounding of the double).
// The exponent is a double: a float32 exponent (tensor ** tensor) widens exactly; torch's
// `0-dim tensor ** python_float` raises to the double exponent and rounds once.
float pow_f32(float base, double exponent);

// Whether b^e > m, for b > 0, m > 0 finite: the sign of e ln b - ln m, each logarithm in
// double-double (relative error about 2^-100). Sets *tie when |e ln b - ln m| < 2^-90 (too close to
// decide; b^e is then an exact float32 midpoint in every case that can arise from float32 inputs).
bool pow_exceeds(double b, double e, double m, bool* tie);

}  // namespace posenc::detail
