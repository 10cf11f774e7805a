// RotaryEmbedding (construction and checks; the row loops are in rotary_rows.cpp): per row, the
// float32 cos and sin of every frequency are made once (float64 angle addition from a block anchor,
// rounded once), then every head of the row is rotated by the SIMD kernel (rotary/kernels.hpp).
//
// Rows at integer positions p are computed as anchor a = p - (p mod 32) rotated by the step
// e = p - a: (sin, cos)(a w) in float64 per block of 32 positions (cached while the rows stay in
// the block), (sin, cos)(e w) from a float64 table made once per frequency set. A row's value
// thus depends only on its position: a one-row decoding call gives the bulk call's row bit for
// bit. Fractional positions, and angles beyond the fast reduction's 2^31, are computed directly
// (libm for the latter).
#include <algorithm>
#include <cmath>
#include <string>

#include "rotary/angle_set.hpp"

namespace posenc {

using namespace rotary_detail;

RotaryEmbedding::RotaryEmbedding() = default;
RotaryEmbedding::~RotaryEmbedding() = default;
RotaryEmbedding::RotaryEmbedding(RotaryEmbedding&&) noexcept = default;
RotaryEmbedding& RotaryEmbedding::operator=(RotaryEmbedding&&) noexcept = default;

EncodingError RotaryEmbedding::init(const RotarySpec& spec_in, ArgumentNames names) {
  ready_ = false;
  RotarySpec spec = spec_in;
  if (spec.rotary_dim == 0) spec.rotary_dim = spec.head_dim;
  EncodingError e = validate(spec, names);
  if (!e.ok()) return e;
  std::vector<double> inv, tails;
  double attention = 1.0;
  e = rotary_frequencies(spec, 0.0, &inv, &attention, &tails);
  if (e.ok()) e = check_frequencies(inv);
  if (!e.ok()) return e;
  auto base = std::make_unique<AngleSet>();
  if (!base->build(std::move(inv), tails, attention, true)) return out_of_memory();
  std::unique_ptr<AngleSet> long_set;
  if (spec.scaling.type == RopeScalingType::longrope) {
    e = rotary_frequencies(spec, spec.scaling.original_max_positions + 1, &inv, &attention);
    if (e.ok()) e = check_frequencies(inv);
    if (!e.ok()) return e;
    long_set = std::make_unique<AngleSet>();
    if (!long_set->build(std::move(inv), {}, attention, true)) return out_of_memory();
  }
  spec_ = std::move(spec);
  base_set_ = std::move(base);
  long_set_ = std::move(long_set);
  ready_ = true;
  return {};
}

const std::vector<double>& RotaryEmbedding::inverse_frequencies() const {
  static const std::vector<double> kNone;
  return ready_ ? base_set_->inv : kNone;
}

double RotaryEmbedding::attention_scaling() const {
  return ready_ ? base_set_->attention : 1.0;
}

EncodingError RotaryEmbedding::check_rows(const RotaryRows& rows, double* sequence_length) const {
  if (!ready_)
    return encoding_error(EncodingStatus::invalid_argument, "rotary",
                          "is not initialised (init() did not return ok)");
  if (rows.count < 1 || rows.count > kMaxRotaryElements)
    return encoding_error(EncodingStatus::invalid_argument, "length",
                          "must be an integer >= 1, got " + integer_text(rows.count));
  auto bad_position = [](const std::string& name, double v) {
    return encoding_error(EncodingStatus::invalid_position, name,
                          "must be a finite number from 0 to 2^31 - 1, got " + format_number(v));
  };
  double largest = 0;
  if (rows.mrope_positions != nullptr) {
    if (!is_multimodal(spec_))
      return encoding_error(EncodingStatus::invalid_argument, "positions",
                            "must be one row of positions: three rows (t, h, w) are for a "
                            "multimodal RoPE (mrope_section)");
    // One pass without an early exit (it vectorizes), then the first bad position named.
    const double* p = rows.mrope_positions;
    bool ok = true;
    for (std::int64_t i = 0; i < 3 * rows.count; ++i) {
      ok = ok & (p[i] >= 0) & (p[i] <= kMaxRotaryPosition);
      largest = p[i] > largest ? p[i] : largest;
    }
    static const char* const kRow[] = {"t", "h", "w"};
    for (std::int64_t i = 0; !ok; ++i) {
      if (!(p[i] >= 0 && p[i] <= kMaxRotaryPosition))
        return bad_position(std::string("positions.") + kRow[i / rows.count] + "[" +
                                integer_text(i % rows.count) + "]",
                            p[i]);
    }
  } else if (rows.positions != nullptr) {
    for (std::int64_t r = 0; r < rows.count; ++r) {
      const double p = rows.positions[r];
      if (!(p >= 0 && p <= kMaxRotaryPosition))
        return bad_position("positions[" + integer_text(r) + "]", p);
      largest = std::max(largest, p);
    }
  } else {
    if (!(rows.first_position >= 0 && rows.first_position <= kMaxRotaryPosition))
      return bad_position("offset", rows.first_position);
    largest = rows.first_position + static_cast<double>(rows.count - 1);
    if (largest > kMaxRotaryPosition) return bad_position("offset + length - 1", largest);
  }
  const double L = rows.sequence_length;
  if (L != 0 && !(L >= 1 && L <= kMaxRotaryPosition + 1))
    return encoding_error(EncodingStatus::invalid_argument, "sequenceLength",
                          "must be 0 or a number from 1 to 2^31, got " + format_number(L));
  *sequence_length = L != 0 ? L : largest + 1;
  return {};
}

EncodingError RotaryEmbedding::angle_set_for(double sequence_length, const AngleSet** set,
                                             std::unique_ptr<AngleSet>* temporary) const {
  const RopeScaling& s = spec_.scaling;
  *set = base_set_.get();
  if (s.type == RopeScalingType::longrope && sequence_length > s.original_max_positions) {
    *set = long_set_.get();
  } else if (s.type == RopeScalingType::dynamic && sequence_length > s.original_max_positions) {
    // HF recomputes the frequencies for seq_len = max(position_ids) + 1 beyond the original
    // context (stateless here: HF keeps the largest seq_len seen until it drops below L0).
    std::vector<double> inv;
    double attention = 1.0;
    EncodingError e = rotary_frequencies(spec_, sequence_length, &inv, &attention);
    if (e.ok()) e = check_frequencies(inv);
    if (!e.ok()) return e;
    *temporary = std::make_unique<AngleSet>();
    if (!(*temporary)->build(std::move(inv), {}, attention, true)) return out_of_memory();
    *set = temporary->get();
  }
  return {};
}

EncodingError RotaryEmbedding::check_cos_sin(const RotaryRows& rows, const float* cos,
                                             const float* sin, std::size_t cos_len,
                                             std::size_t sin_len, double* sequence_length) const {
  EncodingError e = check_rows(rows, sequence_length);
  if (!e.ok()) return e;
  const std::int64_t rd = spec_.rotary_dim;
  if (rows.count > kMaxRotaryElements / rd)
    return encoding_error(EncodingStatus::invalid_argument, "length",
                          "times rotaryDim must be at most 2^31 - 1");
  const std::size_t want = static_cast<std::size_t>(rows.count * rd);
  if (cos == nullptr || cos_len != want)
    return encoding_error(EncodingStatus::size_mismatch, "cos",
                          "must hold length * rotaryDim = " + integer_text(want) + " floats");
  if (sin == nullptr || sin_len != want)
    return encoding_error(EncodingStatus::size_mismatch, "sin",
                          "must hold length * rotaryDim = " + integer_text(want) + " floats");
  return {};
}

EncodingError RotaryEmbedding::check_apply(const RotaryRows& rows, std::int64_t heads,
                                           const void* x, std::size_t x_len,
                                           double* sequence_length) const {
  EncodingError e = check_rows(rows, sequence_length);
  if (!e.ok()) return e;
  const std::int64_t hd = spec_.head_dim;
  if (heads < 1 || heads > kMaxRotaryElements / hd ||
      rows.count > kMaxRotaryElements / (heads * hd))
    return encoding_error(EncodingStatus::invalid_argument, "heads",
                          "must be an integer >= 1 with length * heads * headDim at most 2^31 - 1, "
                          "got " +
                              integer_text(heads));
  const std::size_t want = static_cast<std::size_t>(rows.count * heads * hd);
  if (x == nullptr || x_len != want)
    return encoding_error(EncodingStatus::size_mismatch, "x",
                          "must hold length * heads * headDim = " + integer_text(want) + " floats");
  return {};
}

}  // namespace posenc
