// RotaryEmbedding::cos_sin_half: the cos / sin tables as float16 or bfloat16 bits, each value
// rounded once (posenc/half.hpp). cos_sin writes its float32 values, to_half converts them block by
// block, and the rare float32 values that are 16-bit rounding midpoints get the side of the exact
// value cos(p w) or sin(p w) (the double-double path the float32 kernels use for their own hard
// cases). With an attention scaling A != 1 the value is Hugging Face's float32 product
// float32(cos) * float32(A), which the model then casts: its 16-bit rounding is that of the float32
// product (ties to even, as torch's .to(torch.float16) does).
#include <cmath>

#include "posenc/half.hpp"
#include "posenc/rotary/rotary.hpp"
#include "posenc/rotary/spec.hpp"
#include "rotary/angle_set.hpp"
#include "sincos/kernel_math.hpp"
#include "sincos/row_copy.hpp"

namespace posenc {

EncodingError RotaryEmbedding::cos_sin_half(const RotaryRows& rows, std::uint16_t* cos,
                                            std::uint16_t* sin, std::size_t cos_len,
                                            std::size_t sin_len, HalfFormat format,
                                            RotaryAnchorCache* cache, ThreadPool* pool) const {
  float* cos32 = reinterpret_cast<float*>(cos);
  float* sin32 = reinterpret_cast<float*>(sin);
  EncodingError e = cos_sin(rows, cos32, sin32, cos_len, sin_len, cache, pool);
  if (!e.ok()) return e;
  double L = 0;
  e = check_cos_sin(rows, cos32, sin32, cos_len, sin_len, &L);
  const AngleSet* set = nullptr;
  std::unique_ptr<AngleSet> temporary;
  if (e.ok()) e = angle_set_for(L, &set, &temporary);
  if (!e.ok()) return e;
  const bool exact = static_cast<float>(set->attention) == 1.0f;
  const std::int64_t rd = spec_.rotary_dim, n = rd / 2;
  const bool half = spec_.layout != RotaryLayout::interleaved;
  // Block by block from the front: a block's floats are copied out before its 16-bit values are
  // written, and those land below the floats not yet read.
  constexpr std::size_t kBlock = 1024;
  float values[kBlock];
  std::uint32_t midpoints[kBlock];
  for (int table = 0; table < 2; ++table) {
    const bool cosine = table == 0;
    std::uint16_t* out = cosine ? cos : sin;
    const float* in = cosine ? cos32 : sin32;
    for (std::size_t start = 0; start < cos_len; start += kBlock) {
      const std::size_t count = cos_len - start < kBlock ? cos_len - start : kBlock;
      detail::copy_floats(values, in + start, count);
      const std::size_t mids = to_half(values, out + start, count, format, midpoints);
      if (!exact) continue;  // the float32 product is the value (above)
      for (std::size_t k = 0; k < mids; ++k) {
        const std::size_t i = start + midpoints[k];
        const std::int64_t r = static_cast<std::int64_t>(i) / rd,
                           c = static_cast<std::int64_t>(i) % rd;
        const std::int64_t j = half ? c % n : c / 2;  // cat(freqs, freqs) or repeat_interleave
        const double p = rows.mrope_positions != nullptr
                             ? rows.mrope_positions[mrope_row(spec_, j) * rows.count + r]
                         : rows.positions != nullptr ? rows.positions[r]
                                                     : rows.first_position + static_cast<double>(r);
        const float f = values[midpoints[k]];
        const int side = detail::exact_side(p, set->w.data()[j],
                                            set->has_tails() ? set->lo.data()[j] : 0.0, cosine, f);
        if (side == kSideUndecided) {
          return encoding_error(EncodingStatus::invalid_argument, "dtype",
                                "cannot be met for this value: its 16-bit rounding is undecided "
                                "(none is known; please report it)");
        }
        out[i] = half_bits_for_side(f, side, format);
      }
    }
  }
  return EncodingError{};
}

}  // namespace posenc
