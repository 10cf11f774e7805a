// RotaryEmbedding::cos_sin_half: the cos / sin tables as float16 or bfloat16 bits, each value
// rounded once (posenc/half.hpp). cos_sin writes its float32 values, to_half_blocks converts
// them (in place, or from each share's buffer when split between threads), and the rare float32
// values that are 16-bit rounding midpoints get the side of the exact value cos(p w) or sin(p w)
// (the double-double path the float32 kernels use for their own hard cases). With an attention
// scaling A != 1 the value is Hugging Face's float32 product float32(cos) * float32(A), which the
// model then casts: its 16-bit rounding is that of the float32 product (ties to even, as torch's
// .to(torch.float16) does).
#include <atomic>
#include <cmath>

#include "half/in_place.hpp"
#include "posenc/half.hpp"
#include "posenc/parallel/thread_pool.hpp"
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

namespace {

EncodingError undecided_error() {
  return encoding_error(EncodingStatus::invalid_argument, "dtype",
                        "cannot be met for this value: its 16-bit rounding is undecided "
                        "(none is known; please report it)");
}

}  // namespace

EncodingError RotaryEmbedding::cos_sin_half(const RotaryRows& rows, std::uint16_t* cos,
                                            std::uint16_t* sin, std::size_t cos_len,
                                            std::size_t sin_len, HalfFormat format,
                                            RotaryAnchorCache* cache, ThreadPool* pool) const {
  if constexpr (ThreadPool::kThreaded) {
    if (split_grain(pool, rows, 2 * spec_.rotary_dim) != 0)
      return cos_sin_half_split(rows, cos, sin, cos_len, sin_len, format, pool);
  }
  float* cos32 = reinterpret_cast<float*>(cos);
  float* sin32 = reinterpret_cast<float*>(sin);
  EncodingError e = cos_sin(rows, cos32, sin32, cos_len, sin_len, cache, nullptr);
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
    if (!detail::to_half_in_place(cosine ? cos : sin, cos_len, format, side))
      return undecided_error();
  }
  return EncodingError{};
}

EncodingError RotaryEmbedding::cos_sin_half_split(const RotaryRows& rows, std::uint16_t* cos,
                                                  std::uint16_t* sin, std::size_t cos_len,
                                                  std::size_t sin_len, HalfFormat format,
                                                  ThreadPool* pool) const {
  // Each share: its rows' float32 values in a buffer of its own, converted into place (converted
  // in place, a share's bits would land on another share's floats), midpoints as above.
  double L = 0;
  EncodingError e = check_cos_sin(rows, reinterpret_cast<float*>(cos),
                                  reinterpret_cast<float*>(sin), cos_len, sin_len, &L);
  const AngleSet* set = nullptr;
  std::unique_ptr<AngleSet> temporary;
  if (e.ok()) e = angle_set_for(L, &set, &temporary);
  if (!e.ok()) return e;
  const float a32 = static_cast<float>(set->attention);
  const bool exact = a32 == 1.0f, half = spec_.layout != RotaryLayout::interleaved;
  const std::int64_t rd = spec_.rotary_dim;
  std::atomic<bool> undecided{false};
  auto part = [&](std::int64_t begin, std::int64_t end) {
    const auto n = static_cast<std::size_t>((end - begin) * rd);
    const auto at = static_cast<std::size_t>(begin * rd);
    Buffer<float> local;
    if (!local.resize_for_overwrite(2 * n) ||
        !cos_sin_part(*set, rows, begin, end, a32, half, local.data(), local.data() + n))
      return false;
    for (int table = 0; table < 2; ++table) {
      const bool cosine = table == 0;
      const auto side = [&](std::size_t i, float f) {
        return exact ? midpoint_side(rows, *set, cosine, at + i, f) : 0;
      };
      if (!detail::to_half_blocks(local.data() + table * n, (cosine ? cos : sin) + at, n, format,
                                  side))
        undecided.store(true, std::memory_order_relaxed);
    }
    return true;
  };
  e = split(pool, rows.count, split_grain(pool, rows, 2 * rd), std::move(temporary), part, nullptr);
  if (!e.ok()) return e;
  return undecided.load(std::memory_order_relaxed) ? undecided_error() : EncodingError{};
}

}  // namespace posenc
