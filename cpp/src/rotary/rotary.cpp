// RotaryEmbedding: per row, the float32 cos and sin of every frequency are made once (float64
// angle addition from a block anchor, rounded once), then every head of the row is rotated by
// the SIMD kernel (rotary/kernels.hpp).
//
// Rows at integer positions p are computed as anchor a = p - (p mod 32) rotated by the step
// e = p - a: (sin, cos)(a w) in float64 per block of 32 positions (cached while the rows stay in
// the block), (sin, cos)(e w) from a float64 table made once per frequency set. A row's value
// thus depends only on its position: a one-row decoding call gives the bulk call's row bit for
// bit. Fractional positions, and angles beyond the fast reduction's 2^31, are computed directly
// (libm for the latter).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "posenc/buffer.hpp"
#include "posenc/rotary/rotary.hpp"
#include "rotary/kernels.hpp"

namespace posenc {

namespace {

constexpr std::int64_t kBlock = 32;
// Frequency sets above this many (padded) pairs get no step table (it would exceed 1 MB): their
// rows are computed directly.
constexpr std::int64_t kMaxTablePairs = 2048;

std::int64_t pad4(std::int64_t n) {
  return (n + 3) / 4 * 4;
}

// sin and cos of p w >= 0 in float64: the fast reduction (of the exact product) below 2^31, libm
// above.
void sincos_any(double p, double w, double& s, double& c) {
  if (p * w <= detail::kReduceLimit) {
    detail::scalar::sincos_f64(&w, 1, p, &s, &c);
  } else {
    s = std::sin(p * w);
    c = std::cos(p * w);
  }
}

// Validated specs give finite frequencies >= 0; checked again so that no kernel ever sees others.
EncodingError check_frequencies(const std::vector<double>& inv) {
  for (double w : inv)
    if (!(w >= 0 && w < 1e300))
      return encoding_error(EncodingStatus::invalid_argument, "scaling",
                            "gives frequencies that are not finite numbers >= 0");
  return {};
}

EncodingError out_of_memory() {
  return encoding_error(EncodingStatus::out_of_memory, "length",
                        "needs more memory than is available");
}

}  // namespace

struct RotaryEmbedding::AngleSet {
  std::int64_t n = 0, np = 0;  // pairs, padded to a multiple of 4
  std::vector<double> inv;     // the n frequencies (public)
  Buffer<double> w;            // np, zero-padded
  double w_max = 0;
  double attention = 1.0;
  std::int64_t blocks = 1;  // step table rows: kBlock, or 1 (only the identity e = 0)
  Buffer<double> step_s, step_c;

  bool build(std::vector<double> frequencies, double attention_scaling, bool with_table) {
    inv = std::move(frequencies);
    n = static_cast<std::int64_t>(inv.size());
    np = pad4(n);
    attention = attention_scaling;
    blocks = with_table && np <= kMaxTablePairs ? kBlock : 1;
    const auto size = [](std::int64_t v) { return static_cast<std::size_t>(v); };
    if (!w.resize(size(np)) || !step_s.resize(size(blocks * np)) ||
        !step_c.resize(size(blocks * np)))
      return false;
    w_max = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      w.data()[i] = inv[size(i)];
      w_max = std::max(w_max, inv[size(i)]);
    }
    for (std::int64_t e = 0; e < blocks; ++e)
      for (std::int64_t i = 0; i < np; ++i)
        sincos_any(static_cast<double>(e), w.data()[i], step_s.data()[e * np + i],
                   step_c.data()[e * np + i]);
    return true;
  }
};

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
  std::vector<double> inv;
  double attention = 1.0;
  e = rotary_frequencies(spec, 0.0, &inv, &attention);
  if (e.ok()) e = check_frequencies(inv);
  if (!e.ok()) return e;
  auto base = std::make_unique<AngleSet>();
  if (!base->build(std::move(inv), attention, true)) return out_of_memory();
  std::unique_ptr<AngleSet> long_set;
  if (spec.scaling.type == RopeScalingType::longrope) {
    e = rotary_frequencies(spec, spec.scaling.original_max_positions + 1, &inv, &attention);
    if (e.ok()) e = check_frequencies(inv);
    if (!e.ok()) return e;
    long_set = std::make_unique<AngleSet>();
    if (!long_set->build(std::move(inv), attention, true)) return out_of_memory();
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
                          "must be an integer >= 1 (got " + std::to_string(rows.count) + ")");
  auto bad_position = [](const std::string& name, double v) {
    return encoding_error(
        EncodingStatus::invalid_position, name,
        "must be a finite number from 0 to 2^31 - 1 (got " + format_number(v) + ")");
  };
  double largest = 0;
  if (rows.positions != nullptr) {
    for (std::int64_t r = 0; r < rows.count; ++r) {
      const double p = rows.positions[r];
      if (!(p >= 0 && p <= kMaxRotaryPosition))
        return bad_position("positions[" + std::to_string(r) + "]", p);
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
                          "must be 0 or a number from 1 to 2^31 (got " + format_number(L) + ")");
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
    if (!(*temporary)->build(std::move(inv), attention, true)) return out_of_memory();
    *set = temporary->get();
  }
  return {};
}

template <class RowFn>
bool RotaryEmbedding::for_each_row(const AngleSet& set, const RotaryRows& rows, bool for_apply,
                                   RowFn row_fn, float* direct_s, float* direct_c,
                                   std::int64_t direct_stride) const {
  // Scratch: anchor sines and cosines (float64), the row's float32 cos and sin.
  const std::int64_t np = set.np;
  Buffer<double> anchor;
  Buffer<float> values;
  if (!anchor.resize(static_cast<std::size_t>(2 * np)) ||
      !values.resize(static_cast<std::size_t>(2 * np)))
    return false;
  double* sa = anchor.data();
  double* ca = sa + np;
  float* s = values.data();
  float* c = s + np;
  const double scale = for_apply ? set.attention : 1.0;
  double cached = -1;
  for (std::int64_t r = 0; r < rows.count; ++r) {
    const double p = rows.positions != nullptr ? rows.positions[r]
                                               : rows.first_position + static_cast<double>(r);
    const bool fast = p * set.w_max <= detail::kReduceLimit;
    std::int64_t e = 0;
    if (fast && set.blocks > 1 && p == std::floor(p)) {
      const double a = p - std::fmod(p, static_cast<double>(kBlock));
      e = static_cast<std::int64_t>(p - a);
      if (a != cached) {
        detail::rotary_kernel::sincos_f64(set.w.data(), np, a, sa, ca);
        cached = a;
      }
    } else if (fast) {
      detail::rotary_kernel::sincos_f64(set.w.data(), np, p, sa, ca);
      cached = -1;
    } else {
      for (std::int64_t i = 0; i < np; ++i)
        sincos_any(p, set.w.data()[i], sa[i], ca[i]);
      cached = -1;
    }
    // The row's float32 sines and cosines: into the caller's rows when it gives them (np floats
    // each: the caller's rows must be that wide), else into the scratch.
    float* rs = direct_s != nullptr ? direct_s + r * direct_stride : s;
    float* rc = direct_c != nullptr ? direct_c + r * direct_stride : c;
    detail::rotary_kernel::rotate_to_f32(sa, ca, set.step_s.data() + e * np,
                                         set.step_c.data() + e * np, np, scale, rs, rc);
    row_fn(r, rc, rs);
  }
  return true;
}

EncodingError RotaryEmbedding::cos_sin(const RotaryRows& rows, float* cos, float* sin,
                                       std::size_t cos_len, std::size_t sin_len) const {
  double L = 0;
  EncodingError e = check_rows(rows, &L);
  if (!e.ok()) return e;
  const std::int64_t rd = spec_.rotary_dim, n = rd / 2;
  if (rows.count > kMaxRotaryElements / rd)
    return encoding_error(EncodingStatus::invalid_argument, "length",
                          "times rotaryDim must be at most 2^31 - 1");
  const std::size_t want = static_cast<std::size_t>(rows.count * rd);
  if (cos == nullptr || cos_len != want)
    return encoding_error(EncodingStatus::size_mismatch, "cos",
                          "must hold length * rotaryDim = " + std::to_string(want) + " floats");
  if (sin == nullptr || sin_len != want)
    return encoding_error(EncodingStatus::size_mismatch, "sin",
                          "must hold length * rotaryDim = " + std::to_string(want) + " floats");
  const AngleSet* set = nullptr;
  std::unique_ptr<AngleSet> temporary;
  e = angle_set_for(L, &set, &temporary);
  if (!e.ok()) return e;
  // HF: cos = emb.cos() * attention_scaling, a float32 tensor times a Python float.
  const float a32 = static_cast<float>(set->attention);
  const bool scaled = set->attention != 1.0;
  const bool half = spec_.layout == RotaryLayout::half;
  // Half layout with whole groups of 4 pairs: the kernel writes each row's first half in place,
  // which is then copied to the second half (torch.cat((freqs, freqs))).
  const bool in_place = half && n % 4 == 0;
  const bool done = for_each_row(
      *set, rows, false,
      [&](std::int64_t r, const float* c, const float* s) {
        float* co = cos + r * rd;
        float* so = sin + r * rd;
        if (in_place) {
          if (scaled) {
            for (std::int64_t i = 0; i < n; ++i) {
              co[i] *= a32;
              so[i] *= a32;
            }
          }
          std::memcpy(co + n, co, static_cast<std::size_t>(n) * sizeof(float));
          std::memcpy(so + n, so, static_cast<std::size_t>(n) * sizeof(float));
          return;
        }
        for (std::int64_t i = 0; i < n; ++i) {
          const float cv = scaled ? c[i] * a32 : c[i];
          const float sv = scaled ? s[i] * a32 : s[i];
          if (half) {
            co[i] = co[i + n] = cv;
            so[i] = so[i + n] = sv;
          } else {
            co[2 * i] = co[2 * i + 1] = cv;
            so[2 * i] = so[2 * i + 1] = sv;
          }
        }
      },
      in_place ? sin : nullptr, in_place ? cos : nullptr, rd);
  return done ? EncodingError{} : out_of_memory();
}

EncodingError RotaryEmbedding::apply(const RotaryRows& rows, std::int64_t heads, float* x,
                                     std::size_t x_len) const {
  double L = 0;
  EncodingError e = check_rows(rows, &L);
  if (!e.ok()) return e;
  const std::int64_t hd = spec_.head_dim, rd = spec_.rotary_dim, n = rd / 2;
  if (heads < 1 || heads > kMaxRotaryElements / hd ||
      rows.count > kMaxRotaryElements / (heads * hd))
    return encoding_error(EncodingStatus::invalid_argument, "heads",
                          "must be an integer >= 1 with length * heads * headDim at most 2^31 - 1 "
                          "(got " +
                              std::to_string(heads) + ")");
  const std::size_t want = static_cast<std::size_t>(rows.count * heads * hd);
  if (x == nullptr || x_len != want)
    return encoding_error(
        EncodingStatus::size_mismatch, "x",
        "must hold length * heads * headDim = " + std::to_string(want) + " floats");
  const AngleSet* set = nullptr;
  std::unique_ptr<AngleSet> temporary;
  e = angle_set_for(L, &set, &temporary);
  if (!e.ok()) return e;
  Buffer<float> pairs;  // interleaved: each cosine twice, (-sin, sin)
  if (spec_.layout == RotaryLayout::interleaved && !pairs.resize(static_cast<std::size_t>(2 * rd)))
    return out_of_memory();
  const std::int64_t row_floats = heads * hd;
  const bool done =
      for_each_row(*set, rows, true, [&](std::int64_t r, const float* c, const float* s) {
        float* row = x + r * row_floats;
        if (spec_.layout == RotaryLayout::half) {
          detail::rotary_kernel::rotate_half(c, s, n, heads, hd, row);
        } else {
          float* cd = pairs.data();
          float* ss = cd + rd;
          for (std::int64_t i = 0; i < n; ++i) {
            cd[2 * i] = cd[2 * i + 1] = c[i];
            ss[2 * i] = -s[i];
            ss[2 * i + 1] = s[i];
          }
          detail::rotary_kernel::rotate_interleaved(cd, ss, rd, heads, hd, row);
        }
      });
  return done ? EncodingError{} : out_of_memory();
}

}  // namespace posenc
