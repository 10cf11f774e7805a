// RotaryEmbedding::cos_sin_half: the cos / sin tables as float16 or bfloat16 bits, each value
// rounded once (posenc/half.hpp). cos_sin writes its float32 values, to_half_in_place converts
// them, and the rare float32 values that are 16-bit rounding midpoints get the side of the exact
// value cos(p w) or sin(p w) (the double-double path the float32 kernels use for their own hard
// cases). With an attention scaling A != 1 the value is Hugging Face's float32 product
// float32(cos) * float32(A), which the model then casts: its 16-bit rounding is that of the float32
// product (ties to even, as torch's .to(torch.float16) does).
#include <cmath>

#include "half/in_place.hpp"
#include "posenc/half.hpp"
#include "posenc/rotary/rotary.hpp"
#include "posenc/rotary/spec.hpp"
#include "rotary/angle_set.hpp"
#include "sincos/kernel_math.hpp"

namespace posenc {

// The exact side of the midpoint value f at index i of a cos (cosine) or sin table: the frequency
// and position its column and row stand for (one copy for both tables: module size).
[[gnu::noinline]] int RotaryEmbedding::midpoint_side(const RotaryRows& rows, const AngleSet& set,
                                                     bool cosine, std::size_t i, float f) const {
  const std::int64_t rd = spec_.rotary_dim, n = rd / 2;
  const std::int64_t r = static_cast<std::int64_t>(i) / rd, c = static_cast<std::int64_t>(i) % rd;
  // cat(freqs, freqs), or repeat_interleave
  const std::int64_t j = spec_.layout != RotaryLayout::interleaved ? c % n : c / 2;
  const double p = rows.mrope_positions != nullptr
                       ? rows.mrope_positions[mrope_row(spec_, j) * rows.count + r]
                   : rows.positions != nullptr ? rows.positions[r]
                                               : rows.first_position + static_cast<double>(r);
  return detail::exact_side(p, set.w.data()[j], set.has_tails() ? set.lo.data()[j] : 0.0, cosine,
                            f);
}

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
  // Each table converted in place. A midpoint's side comes from the exact value of the frequency
  // and position its column and row stand for; with A != 1 the float32 product is the value: side
  // 0, a tie, to even.
  const bool exact = static_cast<float>(set->attention) == 1.0f;
  for (int table = 0; table < 2; ++table) {
    const bool cosine = table == 0;
    const auto side = [&](std::size_t i, float f) {
      return exact ? midpoint_side(rows, *set, cosine, i, f) : 0;
    };
    if (!detail::to_half_in_place(cosine ? cos : sin, cos_len, format, side)) {
      return encoding_error(EncodingStatus::invalid_argument, "dtype",
                            "cannot be met for this value: its 16-bit rounding is undecided "
                            "(none is known; please report it)");
    }
  }
  return EncodingError{};
}

}  // namespace posenc
