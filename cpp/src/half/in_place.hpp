// Internal: float32 values converted to 16-bit bits (posenc/half.hpp), in place or not, the loop
// the families' 16-bit outputs share (the encoder's rows, RoPE's cos / sin tables, rot.apply's
// results).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "posenc/half.hpp"

namespace posenc::detail {

// Rounds n floats at in to 16 bits at out, a block of floats at a time; out may be in's own
// address (to_half allows that; a later block's bits land below its own floats), else they must not
// overlap. side(index, value) gives a midpoint's exact side (sign of x - value, x the exact value
// at that index, or kSideUndecided: then false, out left partly written), from the value to_half
// kept; with side nullptr, midpoints go to even (to_half's rounding of the float32 value). A
// template, so that each family's side is inlined in its loop.
template <class Side>
bool to_half_blocks(const float* in, std::uint16_t* out, std::size_t n, HalfFormat format,
                    Side side) {
  constexpr std::size_t kBlock = 1024;
  std::uint32_t midpoints[kBlock];
  float values[kBlock];
  constexpr bool sided = !std::is_same_v<Side, std::nullptr_t>;
  for (std::size_t start = 0; start < n; start += kBlock) {
    const std::size_t count = n - start < kBlock ? n - start : kBlock;
    const std::size_t mids =
        to_half(in + start, out + start, count, format, midpoints, sided ? values : nullptr);
    if constexpr (sided) {
      for (std::size_t k = 0; k < mids; ++k) {
        const int s = side(start + midpoints[k], values[k]);
        if (s == kSideUndecided) return false;
        out[start + midpoints[k]] = half_bits_for_side(values[k], s, format);
      }
    }
  }
  return true;
}

// to_half_blocks in place: the bits in data's first n uint16.
template <class Side>
bool to_half_in_place(void* data, std::size_t n, HalfFormat format, Side side) {
  return to_half_blocks(static_cast<const float*>(data), static_cast<std::uint16_t*>(data), n,
                        format, side);
}

}  // namespace posenc::detail
