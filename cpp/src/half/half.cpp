// float32 -> float16 / bfloat16 bits with the list of rounding midpoints (posenc/half.hpp). The
// scalar reference works on the float32 bits; the wasm SIMD kernel does the common case eight
// values at a time (tests/cpp/test_half.cpp checks it equal to the scalar one on every float32
// class). Kept small: it is in every app's wasm.
#include "posenc/half.hpp"

#include <cstring>

#include "hot_entry.hpp"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

namespace posenc {
namespace {

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
inline std::uint16_t one(std::uint32_t b, HalfFormat format, bool& midpoint) {
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

}  // namespace

[[gnu::noinline]] std::size_t to_half_scalar(const float* in, std::uint16_t* out, std::size_t n,
                                             HalfFormat format, std::uint32_t* midpoints) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    bool midpoint;
    out[i] = one(bits_of(in[i]), format, midpoint);
    if (midpoint) midpoints[count++] = static_cast<std::uint32_t>(i);
  }
  return count;
}

#ifdef __wasm_simd128__
namespace {

// Eight values at a time when all are ordinary (zero, or finite and for float16 normal and below
// the overflow threshold: then the rounding is an integer add and shift of the bits) and none is a
// midpoint. Other groups (rare in these tables: tiny values, one value in 2^13 a float16 midpoint)
// go through the scalar loop, which also lists the midpoints. One instance per format: the shifts
// by a constant are single instructions, by a variable count several (the kernel ran at 1.6 ns a
// value instead of 0.75).
template <bool kBf16>
std::size_t to_half_simd(const float* in, std::uint16_t* out, std::size_t n,
                         std::uint32_t* midpoints) {
  constexpr HalfFormat format = kBf16 ? HalfFormat::bfloat16 : HalfFormat::float16;
  constexpr int shift = kBf16 ? 16 : 13;
  const v128_t abs_mask = wasm_i32x4_splat(0x7fffffff), sign_mask = wasm_i32x4_splat(0x8000);
  const v128_t zero = wasm_i32x4_splat(0);
  const v128_t below = wasm_i32x4_splat(kBf16 ? 0 : static_cast<int>(kHalfNormal) - 1);
  const v128_t above = wasm_i32x4_splat(static_cast<int>(kBf16 ? kInf : kHalfOverflow));
  const v128_t low_mask = wasm_i32x4_splat(kBf16 ? 0xffff : 0x1fff);
  const v128_t mid = wasm_i32x4_splat(kBf16 ? 0x8000 : 0x1000);
  const v128_t round = wasm_i32x4_splat(kBf16 ? 0x7fff : 0xfff), one_bit = wasm_i32x4_splat(1);
  const v128_t rebias = wasm_i32x4_splat(kBf16 ? 0 : 0x38000000);
  std::size_t i = 0, count = 0;
  for (; i + 8 <= n; i += 8) {
    v128_t h[2], ordinary = wasm_i32x4_splat(-1), midpoint = zero;
    for (int g = 0; g < 2; ++g) {
      const v128_t b = wasm_v128_load(in + i + 4 * g);
      const v128_t a = wasm_v128_and(b, abs_mask);
      const v128_t is_zero = wasm_i32x4_eq(a, zero);
      // (magnitudes are below 2^31: signed compares)
      ordinary = wasm_v128_and(
          ordinary,
          wasm_v128_or(is_zero, wasm_v128_and(wasm_i32x4_gt(a, below), wasm_i32x4_lt(a, above))));
      midpoint = wasm_v128_or(midpoint, wasm_i32x4_eq(wasm_v128_and(a, low_mask), mid));
      const v128_t r = wasm_i32x4_sub(a, rebias);
      const v128_t odd = wasm_v128_and(wasm_u32x4_shr(r, shift), one_bit);
      const v128_t bits = wasm_v128_andnot(
          wasm_u32x4_shr(wasm_i32x4_add(wasm_i32x4_add(r, round), odd), shift), is_zero);
      h[g] = wasm_v128_or(bits, wasm_v128_and(wasm_u32x4_shr(b, 16), sign_mask));
    }
    if (!wasm_i32x4_all_true(ordinary) || wasm_v128_any_true(midpoint)) {
      const std::size_t k0 = count;
      count += to_half_scalar(in + i, out + i, 8, format, midpoints + count);
      for (std::size_t k = k0; k < count; ++k)
        midpoints[k] += static_cast<std::uint32_t>(i);
      continue;
    }
    wasm_v128_store(out + i, wasm_u16x8_narrow_i32x4(h[0], h[1]));
  }
  const std::size_t tail = to_half_scalar(in + i, out + i, n - i, format, midpoints + count);
  for (std::size_t k = count; k < count + tail; ++k)
    midpoints[k] += static_cast<std::uint32_t>(i);
  return count + tail;
}

}  // namespace
#endif

POSENC_HOT_ENTRY std::size_t to_half(const float* in, std::uint16_t* out, std::size_t n,
                                     HalfFormat format, std::uint32_t* midpoints) {
#ifdef __wasm_simd128__
  return format == HalfFormat::bfloat16 ? to_half_simd<true>(in, out, n, midpoints)
                                        : to_half_simd<false>(in, out, n, midpoints);
#else
  return to_half_scalar(in, out, n, format, midpoints);
#endif
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
