// posenc: 16-bit outputs (float16 = IEEE binary16, bfloat16) rounded ONCE from the exact value.
//
// Why the float32 value is enough (almost always): every float32 value posenc produces is
// f = RN32(x), the float32 nearest to the exact value x. A float16 (or bf16) rounding boundary m
// (a midpoint between two neighbours, or the overflow threshold 65520 / 0x1.ffp127) is a float32,
// and rounding is monotonic: x < m implies f <= m, x > m implies f >= m. So RN16(x) = RN16(f)
// unless f == m, and then x's side of f decides: x > f rounds away from zero for f > 0 (towards
// it for f < 0), x < f the other way, x == f is a tie (to even, as RN16(f) does).
//
// to_half converts n floats and lists the indices of those midpoint values (about one value in
// 2^13 for float16, 2^16 for bf16, plus structured ones); the caller asks the family's exact
// machinery for the side of each (sign of x - f) and calls half_bits_for_side.
#pragma once

#include <cstddef>
#include <cstdint>

namespace posenc {

enum class HalfFormat : std::uint8_t { float16 = 0, bfloat16 = 1 };

// out[i] = the bits of in[i] rounded to nearest (ties to even) in format: float16 overflows to
// infinity from 65520 up, NaN gives the quiet NaN 0x7e00 (bf16: 0x7fc0), signs and subnormals are
// kept. Writes to midpoints (room for n entries) the indices i, ascending, where in[i] is a
// rounding midpoint of the format (or its overflow threshold), and returns how many; with values,
// also each midpoint's float32 there (room for n entries), which converting in place overwrites.
// out may be in's own bytes (converting in place: out == (std::uint16_t*)in), else they must not
// overlap. Uses wasm SIMD in the SIMD build; to_half_scalar is the reference.
std::size_t to_half(const float* in, std::uint16_t* out, std::size_t n, HalfFormat format,
                    std::uint32_t* midpoints, float* values = nullptr);
std::size_t to_half_scalar(const float* in, std::uint16_t* out, std::size_t n, HalfFormat format,
                           std::uint32_t* midpoints, float* values = nullptr);

// For 16-bit data through a float32 computation (rot.apply on float16 / bf16 queries): from_half
// widens n 16-bit values (their bits) to their exact float32 values; to_half_nearest rounds n
// floats to 16 bits (ties to even, as to_half; no midpoint list). Either may work in place (out at
// in's own address: the bits then lie in the first n uint16 of the floats' room), else in and out
// must not overlap.
void from_half(const std::uint16_t* in, float* out, std::size_t n, HalfFormat format);
void to_half_nearest(const float* in, std::uint16_t* out, std::size_t n, HalfFormat format);

// The bits of RN(x) in format for a midpoint value f = RN32(x), given side = sign(x - f)
// (-1, 0 or +1; 0 is the tie, to even). For f not a midpoint the result is to_half's for f.
std::uint16_t half_bits_for_side(float f, int side, HalfFormat format);

// What a family's side function returns when its exact machinery cannot tell x from f (x within
// its error bound of f): the caller must report it, never guess.
inline constexpr int kSideUndecided = 2;

}  // namespace posenc
