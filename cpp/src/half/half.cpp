// float32 -> float16 / bfloat16 bits with the list of rounding midpoints (posenc/half.hpp), and
// back. The wasm SIMD kernel does the common case eight values at a time; the scalar reference
// (half_scalar.cpp) the rest (tests/cpp/test_half.cpp checks the two equal on every float32
// class). Kept small: it is in every app's wasm.
#include "posenc/half.hpp"

#include "half/bits.hpp"
#include "half/in_place.hpp"
#include "hot_entry.hpp"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

namespace posenc {

using detail::bits_of;
using detail::kHalfNormal;
using detail::kHalfOverflow;
using detail::kInf;

#ifdef __wasm_simd128__
namespace {

// Eight values at a time when all are ordinary (finite, not zero, and for float16 normal and
// below the overflow threshold: then the rounding is an integer add and shift of the bits) and none
// is a midpoint. Other groups (rare in these tables: zeros, tiny values, one value in 2^13 a
// float16 midpoint) go through the scalar loop, which also lists the midpoints. As no value here is
// a midpoint, ties to even need no odd-bit term: adding half a unit and truncating rounds to
// nearest. One loop for both formats (module size) whose shifts are by a constant (a shift by a
// variable count takes several instructions: the kernel ran at 1.6 ns a value instead of 0.75).
std::size_t to_half_simd(const float* in, std::uint16_t* out, std::size_t n, HalfFormat format,
                         std::uint32_t* midpoints, float* values) {
  const bool bf = format == HalfFormat::bfloat16;
  const v128_t abs_mask = wasm_i32x4_splat(0x7fffffff), sign_mask = wasm_i32x4_splat(0x8000);
  const v128_t below = wasm_i32x4_splat(bf ? 0 : static_cast<int>(kHalfNormal) - 1);
  const v128_t above = wasm_i32x4_splat(static_cast<int>(bf ? kInf : kHalfOverflow));
  const v128_t low_mask = wasm_i32x4_splat(bf ? 0xffff : 0x1fff);
  const v128_t mid = wasm_i32x4_splat(bf ? 0x8000 : 0x1000);
  const v128_t rebias = wasm_i32x4_splat(bf ? 0 : 0x38000000);
  const v128_t scale = wasm_i32x4_splat(bf ? 1 : 8), half_unit = wasm_i32x4_splat(0x8000);
  std::size_t i = 0, count = 0;
  for (; i + 8 <= n; i += 8) {
    v128_t h[2], ordinary = wasm_i32x4_splat(-1), midpoint = wasm_i32x4_splat(0);
    for (int g = 0; g < 2; ++g) {
      const v128_t b = wasm_v128_load(in + i + 4 * g);
      const v128_t a = wasm_v128_and(b, abs_mask);
      // (magnitudes are below 2^31: signed compares)
      ordinary =
          wasm_v128_and(ordinary, wasm_v128_and(wasm_i32x4_gt(a, below), wasm_i32x4_lt(a, above)));
      midpoint = wasm_v128_or(midpoint, wasm_i32x4_eq(wasm_v128_and(a, low_mask), mid));
      // float16 scaled by 8 (below 2^31 in this range) so that both formats shift by 16 and half a
      // unit is 0x8000 in both.
      const v128_t r = wasm_i32x4_mul(wasm_i32x4_sub(a, rebias), scale);
      const v128_t bits = wasm_u32x4_shr(wasm_i32x4_add(r, half_unit), 16);
      h[g] = wasm_v128_or(bits, wasm_v128_and(wasm_u32x4_shr(b, 16), sign_mask));
    }
    if (!wasm_i32x4_all_true(ordinary) || wasm_v128_any_true(midpoint)) {
      const std::size_t k0 = count;
      count += to_half_scalar(in + i, out + i, 8, format, midpoints + count,
                              values != nullptr ? values + count : nullptr);
      for (std::size_t k = k0; k < count; ++k)
        midpoints[k] += static_cast<std::uint32_t>(i);
      continue;
    }
    wasm_v128_store(out + i, wasm_u16x8_narrow_i32x4(h[0], h[1]));
  }
  const std::size_t tail = to_half_scalar(in + i, out + i, n - i, format, midpoints + count,
                                          values != nullptr ? values + count : nullptr);
  for (std::size_t k = count; k < count + tail; ++k)
    midpoints[k] += static_cast<std::uint32_t>(i);
  return count + tail;
}

}  // namespace
#endif

POSENC_HOT_ENTRY std::size_t to_half(const float* in, std::uint16_t* out, std::size_t n,
                                     HalfFormat format, std::uint32_t* midpoints, float* values) {
#ifdef __wasm_simd128__
  return to_half_simd(in, out, n, format, midpoints, values);
#else
  return detail::to_half_loop(in, out, n, format, midpoints, values);  // -O3 here
#endif
}

namespace {

// The float32 bits of a float16 value's bits h (exact).
inline std::uint32_t widen16(std::uint32_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 31u, m = h & 1023u;
  if (e == 31) return sign | 0x7f800000u | (m << 13);  // infinity, NaN (payload kept)
  if (e != 0) return sign | (((e + 112) << 23) | (m << 13));
  return sign | bits_of(static_cast<float>(m) * 0x1p-24f);  // zero, subnormal: exact
}

}  // namespace

POSENC_HOT_ENTRY void from_half_in_place(void* data, std::size_t n, HalfFormat format) {
  // From the end: value i's float lands on 16-bit values 2i and 2i + 1, read before (i = 0) or
  // already widened (i > 0).
  const auto* in = static_cast<const std::uint16_t*>(data);
  auto* out = static_cast<std::uint32_t*>(data);
  std::size_t i = n;
#ifdef __wasm_simd128__
  // Eight at a time (all loads of a group before its stores): bf16 is a shift; float16 normal
  // values rebias their exponent, and a group with another value goes through the scalar loop.
  const v128_t exp_mask = wasm_i16x8_splat(0x7c00);
  for (; i >= 8; i -= 8) {
    const v128_t h = wasm_v128_load(in + i - 8);
    v128_t lo = wasm_u32x4_extend_low_u16x8(h), hi = wasm_u32x4_extend_high_u16x8(h);
    if (format == HalfFormat::bfloat16) {
      lo = wasm_i32x4_shl(lo, 16);
      hi = wasm_i32x4_shl(hi, 16);
    } else {
      const v128_t e = wasm_v128_and(h, exp_mask);
      // every exponent field strictly between 0 and 31
      if (!wasm_i16x8_all_true(e) || wasm_v128_any_true(wasm_i16x8_eq(e, exp_mask))) {
        for (std::size_t k = 8; k-- > 0;)
          out[i - 8 + k] = widen16(in[i - 8 + k]);
        continue;
      }
      const v128_t mag = wasm_i32x4_splat(0x7fff), sign = wasm_i32x4_splat(0x8000);
      const v128_t bias = wasm_i32x4_splat(0x38000000);
      lo = wasm_v128_or(wasm_i32x4_add(wasm_i32x4_shl(wasm_v128_and(lo, mag), 13), bias),
                        wasm_i32x4_shl(wasm_v128_and(lo, sign), 16));
      hi = wasm_v128_or(wasm_i32x4_add(wasm_i32x4_shl(wasm_v128_and(hi, mag), 13), bias),
                        wasm_i32x4_shl(wasm_v128_and(hi, sign), 16));
    }
    wasm_v128_store(out + i - 4, hi);
    wasm_v128_store(out + i - 8, lo);
  }
#endif
  POSENC_NO_UNROLL
  while (i-- > 0)
    out[i] =
        format == HalfFormat::bfloat16 ? static_cast<std::uint32_t>(in[i]) << 16 : widen16(in[i]);
}

[[gnu::noinline]] void to_half_in_place(void* data, std::size_t n, HalfFormat format) {
  detail::to_half_in_place(data, n, format, nullptr);  // midpoints keep to_half's ties to even
}

}  // namespace posenc
