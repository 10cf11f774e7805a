// Internal: float32 values converted in place to 16-bit bits (posenc/half.hpp), the loop the
// families' 16-bit outputs share (the encoder's rows, RoPE's cos / sin tables, rot.apply's
// results).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "posenc/half.hpp"
#include "sincos/row_copy.hpp"

namespace posenc::detail {

// Rounds n floats at data to 16 bits and leaves the bits in data's first n uint16, block by block
// from the front (with a side function a block's floats are copied out first, for the midpoints'
// values; the bits land below the floats not yet read). side(index, value) gives a midpoint's exact
// side (sign of x - value, x the exact value at that index, or kSideUndecided: then false, data
// left partly converted); with side nullptr, midpoints go to even (to_half's rounding of the
// float32 value). A template, so that each family's side is inlined in its loop.
template <class Side>
bool to_half_in_place(void* data, std::size_t n, HalfFormat format, Side side) {
  constexpr std::size_t kBlock = 1024;
  std::uint32_t midpoints[kBlock];
  auto* bits = static_cast<std::uint16_t*>(data);
  const auto* floats = static_cast<const float*>(data);
  if constexpr (std::is_same_v<Side, std::nullptr_t>) {
    // Nothing to ask of the floats afterwards: each block converted where it lies (to_half allows
    // that; a later block's bits land below its own floats), without the copy.
    for (std::size_t start = 0; start < n; start += kBlock)
      to_half(floats + start, bits + start, n - start < kBlock ? n - start : kBlock, format,
              midpoints);
  } else {
    float values[kBlock];
    for (std::size_t start = 0; start < n; start += kBlock) {
      const std::size_t count = n - start < kBlock ? n - start : kBlock;
      copy_floats(values, floats + start, count);  // (memcpy: a JS call per block in wasm)
      const std::size_t mids = to_half(values, bits + start, count, format, midpoints);
      for (std::size_t k = 0; k < mids; ++k) {
        const float f = values[midpoints[k]];
        const int s = side(start + midpoints[k], f);
        if (s == kSideUndecided) return false;
        bits[start + midpoints[k]] = half_bits_for_side(f, s, format);
      }
    }
  }
  return true;
}

}  // namespace posenc::detail
