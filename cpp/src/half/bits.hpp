// Internal: float32 bits, the float16 thresholds and the scalar conversion of one value that
// half.cpp's kernels and half_scalar.cpp's reference share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "posenc/half.hpp"

namespace posenc::detail {

inline std::uint32_t bits_of(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
inline float float_of(std::uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// Magnitudes (float32 bits without the sign): the smallest normal float16 2^-14, the overflow
// threshold 65520 (halfway from 65504 to 2^16), infinity.
constexpr std::uint32_t kHalfNormal = 0x38800000u, kHalfOverflow = 0x477ff000u;
constexpr std::uint32_t kInf = 0x7f800000u;
// 0.5f: |f| + 0.5f rounds |f| < 2^-14 to a multiple of 2^-24 (its ulp), ties to even, and the
// bits of the sum minus 0.5f's are the float16 subnormal's bits.
constexpr std::uint32_t kHalfBits = 0x3f000000u;

// One value: the bits (with sign) and whether it is a midpoint.
inline std::uint16_t to_half_one(std::uint32_t b, HalfFormat format, bool& midpoint) {
  const std::uint32_t sign = (b >> 16) & 0x8000u;
  const std::uint32_t a = b & 0x7fffffffu;
  midpoint = false;
  if (a > kInf)
    return static_cast<std::uint16_t>(sign | (format == HalfFormat::bfloat16 ? 0x7fc0u : 0x7e00u));
  if (format == HalfFormat::bfloat16) {
    midpoint = a < kInf && (a & 0xffffu) == 0x8000u;
    return static_cast<std::uint16_t>(sign | ((a + 0x7fffu + ((a >> 16) & 1u)) >> 16));
  }
  if (a >= kHalfNormal) {
    midpoint = a <= kHalfOverflow && (a & 0x1fffu) == 0x1000u;
    if (a >= kHalfOverflow) return static_cast<std::uint16_t>(sign | 0x7c00u);
    const std::uint32_t r = a - 0x38000000u;  // exponent rebiased from 127 to 15
    return static_cast<std::uint16_t>(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
  }
  const float f = float_of(a);
  const float rounded = (f + 0.5f) - 0.5f;  // both exact: f < 2^-14
  midpoint = f - rounded == 0x1p-25f || rounded - f == 0x1p-25f;
  return static_cast<std::uint16_t>(sign | (bits_of(f + 0.5f) - kHalfBits));
}

// to_half's scalar loop (posenc/half.hpp).
inline std::size_t to_half_loop(const float* in, std::uint16_t* out, std::size_t n,
                                HalfFormat format, std::uint32_t* midpoints, float* values) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    bool midpoint;
    const float f = in[i];  // (read before out[i] is written: in place, they may share bytes)
    out[i] = to_half_one(bits_of(f), format, midpoint);
    if (midpoint) {
      if (values != nullptr) values[count] = f;
      midpoints[count++] = static_cast<std::uint32_t>(i);
    }
  }
  return count;
}

}  // namespace posenc::detail
