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

// float32 -> 16 bits, eight values at a time while all are ordinary (for float16: normal, and
// below 0x477f0000, a bit under the overflow threshold; for bf16: finite) and none is a midpoint:
// converts such groups from value i and returns where the first other group (or the tail of fewer
// than eight values) starts. Other groups (rare in these tables: zeros, tiny values, one value in
// 2^13 a float16 midpoint) go through the scalar loop, which also lists the midpoints.
// The arithmetic is on the bits: s = the bits times 8 less the rebias (float16; the sign drops out)
// or the bits themselves (bf16), so that in both formats the result is s's high 16 bits rounded,
// and a midpoint is a low half of 0x8000. As no value here is a midpoint, adding 0x8000 and keeping
// the high half rounds to nearest. The checks, the rounding's high halves and the sign are on
// 16-bit lanes, eight values at once. One loop for both formats (module size), shifts by constants
// only (a shift by a variable count takes several instructions). A function of its own, without
// calls: in a loop that called the scalar path, V8 kept the constants on the stack and reloaded
// them every group (to_half of 4096 floats, measured: the earlier kernel 0.53 ns a value, this one
// 0.35 inside such a loop and 0.28 on its own).
[[gnu::noinline]] std::size_t ordinary_run(const float* in, std::uint16_t* out, std::size_t i,
                                           std::size_t n, bool bf) {
  const v128_t scale = wasm_i32x4_splat(bf ? 1 : 8);
  const v128_t rebias = wasm_i32x4_splat(bf ? 0 : static_cast<int>(0xc0000000u));  // 0x38000000 * 8
  const v128_t half_unit = wasm_i32x4_splat(0x8000);
  const v128_t abs16 = wasm_i16x8_splat(0x7fff), sign16 = wasm_i16x8_splat(-0x8000);
  // ordinary: |high half| - low <= span, unsigned (a saturated subtraction of span leaves 0)
  const v128_t low = wasm_i16x8_splat(bf ? 0 : 0x3880);
  const v128_t span = wasm_i16x8_splat(bf ? 0x7f7f : 0x477e - 0x3880);
  for (; i + 8 <= n; i += 8) {
    const v128_t b0 = wasm_v128_load(in + i), b1 = wasm_v128_load(in + i + 4);
    const v128_t s0 = wasm_i32x4_sub(wasm_i32x4_mul(b0, scale), rebias);
    const v128_t s1 = wasm_i32x4_sub(wasm_i32x4_mul(b1, scale), rebias);
    const v128_t hb = wasm_i16x8_shuffle(b0, b1, 1, 3, 5, 7, 9, 11, 13, 15);
    const v128_t ls = wasm_i16x8_shuffle(s0, s1, 0, 2, 4, 6, 8, 10, 12, 14);
    const v128_t bad =
        wasm_v128_or(wasm_u16x8_sub_sat(wasm_i16x8_sub(wasm_v128_and(hb, abs16), low), span),
                     wasm_i16x8_eq(ls, sign16));
    if (wasm_v128_any_true(bad)) break;
    const v128_t r = wasm_i16x8_shuffle(wasm_i32x4_add(s0, half_unit),
                                        wasm_i32x4_add(s1, half_unit), 1, 3, 5, 7, 9, 11, 13, 15);
    wasm_v128_store(out + i, wasm_v128_or(r, wasm_v128_and(hb, sign16)));
  }
  return i;
}

std::size_t to_half_simd(const float* in, std::uint16_t* out, std::size_t n, HalfFormat format,
                         std::uint32_t* midpoints, float* values) {
  std::size_t i = 0, count = 0;
  for (;;) {
    i = ordinary_run(in, out, i, n, format == HalfFormat::bfloat16);
    const std::size_t m = n - i < 8 ? n - i : 8, k0 = count;
    count += to_half_scalar(in + i, out + i, m, format, midpoints + count,
                            values != nullptr ? values + count : nullptr);
    for (std::size_t k = k0; k < count; ++k)
      midpoints[k] += static_cast<std::uint32_t>(i);
    i += m;
    if (m < 8) return count;
  }
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

#ifdef __wasm_simd128__
// Widens the groups of eight that end at i, going down, while they are ordinary, and returns where
// it stopped (the end of the first other group, or below 8). Eight at a time (all loads of a group
// before its stores), as the high and low 16-bit halves of the floats, interleaved: bf16 is the
// high half; a float16 of a normal exponent has the high half sign | (magnitude >> 3) + 0x3800
// (the rebias 112 << 7) and the low half its bits << 13. Without calls, as ordinary_run.
[[gnu::noinline]] std::size_t ordinary_widen(const std::uint16_t* in, std::uint32_t* out,
                                             std::size_t i, bool bf) {
  const v128_t exp_mask = wasm_i16x8_splat(0x7c00), one_exp = wasm_i16x8_splat(0x0400);
  const v128_t top_exp = wasm_i16x8_splat(0x7800 - 0x0400);
  const v128_t keep = wasm_i16x8_splat(static_cast<std::int16_t>(0x8fff));
  const v128_t bias = wasm_i16x8_splat(0x3800), zero = wasm_i16x8_splat(0);
  for (; i >= 8; i -= 8) {
    const v128_t h = wasm_v128_load(in + i - 8);
    v128_t hi = h, lo = zero;
    if (!bf) {
      // every exponent field strictly between 0 and 31: field - 1 <= 29, unsigned
      const v128_t e = wasm_i16x8_sub(wasm_v128_and(h, exp_mask), one_exp);
      if (wasm_v128_any_true(wasm_u16x8_sub_sat(e, top_exp))) break;
      // the arithmetic shift copies the sign into bits 12-14, which the mask clears
      hi = wasm_i16x8_add(wasm_v128_and(wasm_i16x8_shr(h, 3), keep), bias);
      lo = wasm_i16x8_shl(h, 13);
    }
    wasm_v128_store(out + i - 4, wasm_i16x8_shuffle(lo, hi, 4, 12, 5, 13, 6, 14, 7, 15));
    wasm_v128_store(out + i - 8, wasm_i16x8_shuffle(lo, hi, 0, 8, 1, 9, 2, 10, 3, 11));
  }
  return i;
}
#endif

POSENC_HOT_ENTRY void from_half(const std::uint16_t* in, float* floats, std::size_t n,
                                HalfFormat format) {
  // From the end: in place, value i's float lands on 16-bit values 2i and 2i + 1, read before
  // (i = 0) or already widened (i > 0).
  auto* out = reinterpret_cast<std::uint32_t*>(floats);
  const bool bf = format == HalfFormat::bfloat16;
  std::size_t i = n;
  for (;;) {
    // one group of another value (zero, subnormal, infinity, NaN), or the last values; without
    // SIMD, every value
#ifdef __wasm_simd128__
    i = ordinary_widen(in, out, i, bf);
    const std::size_t stop = i >= 8 ? i - 8 : 0;
#else
    const std::size_t stop = 0;
#endif
    POSENC_NO_UNROLL
    for (; i > stop; --i)
      out[i - 1] = bf ? static_cast<std::uint32_t>(in[i - 1]) << 16 : widen16(in[i - 1]);
    if (i == 0) return;
  }
}

POSENC_HOT_ENTRY void to_half_nearest(const float* in, std::uint16_t* out, std::size_t n,
                                      HalfFormat format) {
  // midpoints keep to_half's ties to even
  detail::to_half_blocks(in, out, n, format, nullptr);
}

}  // namespace posenc
