// The inverse frequencies of a RotarySpec: the formulas of Hugging Face transformers
// (src/transformers/modeling_rope_utils.py: _compute_default_rope_parameters,
// _compute_linear_scaling_rope_parameters, _compute_dynamic_ntk_parameters,
// _compute_yarn_parameters, _compute_llama3_parameters, _compute_longrope_parameters), written
// once over an arithmetic `A`: F64 evaluates them in float64 (explicit options), F32 reproduces
// HF's float32 tensor operations, each correctly rounded (sincos/float32_chain.hpp), with the
// torch semantics that matter for the bits:
// - a Python float entering a float32 tensor operation is rounded to float32 first (A::in);
// - `scalar / tensor` is torch's Tensor.__rdiv__, i.e. tensor.reciprocal() * scalar (A::rdiv):
//   two roundings, not one;
// - `1 - tensor` is rsub, one rounding (A::rsub);
// - the dynamic rule's seq_len is a 0-dim int64 tensor (torch.max(position_ids) + 1), so its base
//   update runs in float32 too; `0-dim tensor ** python_float` raises to the double exponent
//   and rounds once (A::pow_scalar).
// (tests/fixtures/README.md, "Hugging Face formulas, step by step", lists every step; the
// fixtures in tests/fixtures/rotary are computed from it with mpmath.)
// Python-float steps (yarn's correction range, llama3's wavelength bounds, attention factors) are
// float64 in both. pow and log are math/exact_math.hpp's (correctly rounded, no libm tables).
#include <algorithm>
#include <cmath>

#include "math/exact_math.hpp"
#include "posenc/rotary/rotary.hpp"
#include "posenc/sinusoidal/spec.hpp"
#include "sincos/float32_chain.hpp"

namespace posenc {

namespace {

constexpr double kPi = 3.141592653589793;

struct F64 {
  using T = double;
  static T in(double v) { return v; }
  static T add(T a, T b) { return a + b; }
  static T sub(T a, T b) { return a - b; }
  static T mul(T a, T b) { return a * b; }
  static T div(T a, T b) { return a / b; }
  static T pow(T b, T e) { return math::pow(b, e); }
  static T pow_scalar(T b, double e) { return math::pow(b, e); }
  static T rdiv(double s, T t) { return s / t; }
  static T rsub(double s, T t) { return s - t; }
  static T exponent(std::int64_t i, std::int64_t d) {
    return static_cast<double>(2 * i) / static_cast<double>(d);
  }
};

struct F32 {
  using T = float;
  static T in(double v) { return static_cast<float>(v); }
  static T add(T a, T b) { return detail::add_f32(a, b); }
  static T sub(T a, T b) { return detail::sub_f32(a, b); }
  static T mul(T a, T b) { return detail::mul_f32(a, b); }
  static T div(T a, T b) { return detail::div_f32(a, b); }
  static T pow(T b, T e) { return detail::pow_f32(b, e); }
  static T pow_scalar(T b, double e) { return detail::pow_f32(b, e); }
  static T rdiv(double s, T t) { return mul(div(1.0f, t), in(s)); }
  static T rsub(double s, T t) { return sub(in(s), t); }
  // torch.arange(0, d, 2, dtype=int64).float() / d: both exact in float32 (d <= 65536).
  static T exponent(std::int64_t i, std::int64_t d) {
    return div(in(2.0 * static_cast<double>(i)), in(static_cast<double>(d)));
  }
};

// 1 / base^(2i/d) for i < d/2, base a Python float (rounded into the arithmetic) or a float32
// tensor value (dynamic).
template <class A>
std::vector<typename A::T> default_chain(typename A::T base, std::int64_t d) {
  std::vector<typename A::T> inv(static_cast<std::size_t>(d / 2));
  for (std::int64_t i = 0; i < d / 2; ++i)
    inv[static_cast<std::size_t>(i)] = A::rdiv(1.0, A::pow(base, A::exponent(i, d)));
  return inv;
}

// HF's yarn get_mscale.
double get_mscale(double scale, double mscale) {
  return scale <= 1 ? 1.0 : 0.1 * mscale * math::log(scale) + 1.0;
}

// HF's yarn find_correction_dim, in Python's float64 order.
double correction_dim(double rotations, double d, double base, double l0) {
  return (d * math::log(l0 / (rotations * 2 * kPi))) / (2 * math::log(base));
}

template <class A>
std::vector<typename A::T> chain(const RotarySpec& spec, double sequence_length,
                                 double* attention) {
  using T = typename A::T;
  const RopeScaling& s = spec.scaling;
  const std::int64_t d = spec.rotary_dim;
  const std::int64_t n = d / 2;
  *attention = 1.0;
  switch (s.type) {
    case RopeScalingType::none:
      return default_chain<A>(A::in(spec.base), d);
    case RopeScalingType::linear: {
      std::vector<T> inv = default_chain<A>(A::in(spec.base), d);
      for (T& w : inv)
        w = A::div(w, A::in(s.factor));
      return inv;
    }
    case RopeScalingType::dynamic: {
      const double l0 = s.original_max_positions;
      if (!(sequence_length > l0)) return default_chain<A>(A::in(spec.base), d);
      // base * ((factor * seq_len / L0) - (factor - 1)) ** (d / (d - 2)), seq_len a tensor
      T t = A::mul(A::in(s.factor), A::in(sequence_length));
      t = A::div(t, A::in(l0));
      t = A::sub(t, A::in(s.factor - 1));
      t = A::pow_scalar(t, static_cast<double>(d) / static_cast<double>(d - 2));
      return default_chain<A>(A::mul(A::in(spec.base), t), d);
    }
    case RopeScalingType::yarn: {
      const double f = s.factor;
      if (!std::isnan(s.attention_factor)) {
        *attention = s.attention_factor;
      } else if (s.mscale != 0 && s.mscale_all_dim != 0) {
        *attention = get_mscale(f, s.mscale) / get_mscale(f, s.mscale_all_dim);
      } else {
        *attention = get_mscale(f, 1.0);
      }
      const double dd = static_cast<double>(d);
      double low = correction_dim(s.beta_fast, dd, spec.base, s.original_max_positions);
      double high = correction_dim(s.beta_slow, dd, spec.base, s.original_max_positions);
      if (s.truncate) {
        low = std::floor(low);
        high = std::ceil(high);
      }
      low = std::max(low, 0.0);
      high = std::min(high, dd - 1);
      if (low == high) high += 0.001;  // HF: prevent singularity
      std::vector<T> inv(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) {
        const T pos_freq = A::pow(A::in(spec.base), A::exponent(i, d));
        const T extrapolation = A::rdiv(1.0, pos_freq);
        const T interpolation = A::rdiv(1.0, A::mul(A::in(f), pos_freq));
        // linear_ramp_factor: clamp((arange(n) - low) / (high - low), 0, 1)
        T ramp = A::div(A::sub(A::in(static_cast<double>(i)), A::in(low)), A::in(high - low));
        ramp = std::min(std::max(ramp, T(0)), T(1));
        const T extrapolation_factor = A::rsub(1.0, ramp);
        inv[static_cast<std::size_t>(i)] =
            A::add(A::mul(interpolation, A::rsub(1.0, extrapolation_factor)),
                   A::mul(extrapolation, extrapolation_factor));
      }
      return inv;
    }
    case RopeScalingType::llama3: {
      const std::vector<T> base_inv = default_chain<A>(A::in(spec.base), d);
      const double l0 = s.original_max_positions;
      const double low_wavelen = l0 / s.low_freq_factor;
      const double high_wavelen = l0 / s.high_freq_factor;
      std::vector<T> inv(base_inv.size());
      for (std::size_t i = 0; i < inv.size(); ++i) {
        const T w = base_inv[i];
        const T wavelen = A::rdiv(2 * kPi, w);
        const bool above_low = wavelen > A::in(low_wavelen);
        const bool below_high = wavelen < A::in(high_wavelen);
        const T scaled = above_low ? A::div(w, A::in(s.factor)) : w;
        if (!below_high && !above_low) {
          const T smooth = A::div(A::sub(A::rdiv(l0, wavelen), A::in(s.low_freq_factor)),
                                  A::in(s.high_freq_factor - s.low_freq_factor));
          inv[i] = A::add(A::div(A::mul(A::rsub(1.0, smooth), scaled), A::in(s.factor)),
                          A::mul(smooth, scaled));
        } else {
          inv[i] = scaled;
        }
      }
      return inv;
    }
    case RopeScalingType::longrope: {
      const double l0 = s.original_max_positions;
      if (!std::isnan(s.attention_factor)) {
        *attention = s.attention_factor;
      } else {
        *attention = s.factor <= 1.0 ? 1.0 : std::sqrt(1 + math::log(s.factor) / math::log(l0));
      }
      const std::vector<double>& ext = sequence_length > l0 ? s.long_factor : s.short_factor;
      std::vector<T> inv(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i)
        inv[static_cast<std::size_t>(i)] =
            A::rdiv(1.0, A::mul(A::in(ext[static_cast<std::size_t>(i)]),
                                A::pow(A::in(spec.base), A::exponent(i, d))));
      return inv;
    }
  }
  return {};
}

}  // namespace

EncodingError rotary_frequencies(const RotarySpec& spec_in, double sequence_length,
                                 std::vector<double>* inv_freq, double* attention_scaling,
                                 std::vector<double>* tails) {
  RotarySpec spec = spec_in;
  if (spec.rotary_dim == 0) spec.rotary_dim = spec.head_dim;
  EncodingError e = validate(spec);
  if (!e.ok()) return e;
  if (!(sequence_length >= 0) || !std::isfinite(sequence_length))
    return encoding_error(EncodingStatus::invalid_argument, "sequenceLength",
                          "must be a finite number >= 0, got " + format_number(sequence_length));
  if (tails != nullptr) tails->clear();
  double attention = 1.0;
  if (spec.vision != VisionRope::none) {
    // Qwen: the head_dim / 4 frequencies of VisionRotaryEmbedding(head_dim / 2), for h then w.
    // Pixtral: the head_dim / 2 of the whole head, even ones for h, odd ones for w.
    const bool qwen = spec.vision == VisionRope::qwen;
    const std::size_t q = static_cast<std::size_t>(spec.head_dim / 4);
    const std::vector<float> f =
        default_chain<F32>(F32::in(spec.base), spec.head_dim / (qwen ? 2 : 1));
    inv_freq->resize(2 * q);
    for (std::size_t k = 0; k < q; ++k) {
      (*inv_freq)[k] = qwen ? f[k] : f[2 * k];
      (*inv_freq)[q + k] = qwen ? f[k] : f[2 * k + 1];
    }
  } else if (spec.arithmetic == FrequencyArithmetic::hf_float32) {
    const std::vector<float> f = chain<F32>(spec, sequence_length, &attention);
    inv_freq->assign(f.begin(), f.end());
  } else if (spec.scaling.type == RopeScalingType::none && spec.rope_angles == 0) {
    // The real base^(-2i/d): the paper table's frequencies for a table of d columns (heads, the
    // nearest doubles, whether or not the tails are asked for).
    Spec paper;
    paper.dim = spec.rotary_dim;
    paper.base = spec.base;
    inv_freq->resize(static_cast<std::size_t>(spec.rotary_dim / 2));
    if (tails != nullptr) tails->resize(inv_freq->size());
    frequencies(paper, inv_freq->data(), tails != nullptr ? tails->data() : nullptr);
  } else {
    *inv_freq = chain<F64>(spec, sequence_length, &attention);
  }
  // Gemma 4's proportional rule: frequencies from rope_angles on are zero.
  if (spec.rope_angles > 0)
    for (std::size_t i = static_cast<std::size_t>(spec.rope_angles); i < inv_freq->size(); ++i)
      (*inv_freq)[i] = 0.0;
  *attention_scaling = attention;
  return {};
}

}  // namespace posenc
