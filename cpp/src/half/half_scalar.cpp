// The scalar float32 -> float16 / bfloat16 conversion (posenc/half.hpp), compiled for size
// (CMakeLists.txt): the reference the wasm SIMD kernel of half.cpp is tested against and the path
// of its rare groups (tiny values, midpoints, non-finite values), and half_bits_for_side, once per
// midpoint. (The builds without SIMD convert every value with half.cpp's -O3 copy of the loop.)
#include "half/bits.hpp"
#include "posenc/half.hpp"

namespace posenc {

using detail::bits_of;
using detail::float_of;
using detail::kHalfNormal;

[[gnu::noinline]] std::size_t to_half_scalar(const float* in, std::uint16_t* out, std::size_t n,
                                             HalfFormat format, std::uint32_t* midpoints,
                                             float* values) {
  return detail::to_half_loop(in, out, n, format, midpoints, values);
}

std::uint16_t half_bits_for_side(float f, int side, HalfFormat format) {
  std::uint16_t nearest;
  std::uint32_t index;
  const std::uint32_t b = bits_of(f);
  if (to_half_scalar(&f, &nearest, 1, format, &index) == 0 || side == 0) return nearest;
  // The magnitude below f (truncated) and the one above it; x's side of f, seen from zero.
  const std::uint32_t a = b & 0x7fffffffu;
  std::uint32_t below;
  if (format == HalfFormat::bfloat16) {
    below = a >> 16;
  } else if (a >= kHalfNormal) {
    below = (a - 0x38000000u) >> 13;
  } else {
    below = static_cast<std::uint32_t>(float_of(a) * 0x1p24f);  // truncates
  }
  const bool up = (side > 0) == ((b >> 31) == 0);
  return static_cast<std::uint16_t>(((b >> 16) & 0x8000u) | (up ? below + 1 : below));
}

}  // namespace posenc
