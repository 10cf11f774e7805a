// validate(RotarySpec) and the names of the scaling rules.
#include <cmath>
#include <string>

#include "posenc/rotary/spec.hpp"

namespace posenc {

namespace {

struct Names {
  const char* head_dim;
  const char* rotary_dim;
  const char* base;
  const char* type;
  const char* factor;
  const char* original;
  const char* low_freq;
  const char* high_freq;
  const char* beta_fast;
  const char* beta_slow;
  const char* attention;
  const char* mscale;
  const char* mscale_all_dim;
  const char* short_factor;
  const char* long_factor;
};

constexpr Names kOptionNames = {"headDim",
                                "rotaryDim",
                                "base",
                                "scaling.type",
                                "scaling.factor",
                                "scaling.originalMaxPositions",
                                "scaling.lowFreqFactor",
                                "scaling.highFreqFactor",
                                "scaling.betaFast",
                                "scaling.betaSlow",
                                "scaling.attentionFactor",
                                "scaling.mscale",
                                "scaling.mscaleAllDim",
                                "scaling.shortFactor",
                                "scaling.longFactor"};
constexpr Names kConfigNames = {"config.head_dim",
                                "config.partial_rotary_factor",
                                "config.rope_theta",
                                "config.rope_scaling.rope_type",
                                "config.rope_scaling.factor",
                                "config.rope_scaling.original_max_position_embeddings",
                                "config.rope_scaling.low_freq_factor",
                                "config.rope_scaling.high_freq_factor",
                                "config.rope_scaling.beta_fast",
                                "config.rope_scaling.beta_slow",
                                "config.rope_scaling.attention_factor",
                                "config.rope_scaling.mscale",
                                "config.rope_scaling.mscale_all_dim",
                                "config.rope_scaling.short_factor",
                                "config.rope_scaling.long_factor"};

EncodingError bad(const char* name, const std::string& requirement, double got) {
  return encoding_error(EncodingStatus::invalid_argument, name,
                        requirement + ", got " + format_number(got));
}

bool finite(double v) {
  return std::isfinite(v);
}

EncodingError check_factors(const char* name, const std::vector<double>& f, std::int64_t pairs) {
  if (static_cast<std::int64_t>(f.size()) != pairs)
    return bad(name, "must hold rotaryDim / 2 = " + integer_text(pairs) + " numbers",
               static_cast<double>(f.size()));
  for (std::size_t i = 0; i < f.size(); ++i)
    if (!(f[i] >= 1e-6 && f[i] <= 1e6))
      return bad((std::string(name) + "[" + integer_text(i) + "]").c_str(),
                 "must be a number from 1e-6 to 1e6", f[i]);
  return {};
}

}  // namespace

EncodingError validate(const RotarySpec& spec, ArgumentNames names) {
  const Names& n = names == ArgumentNames::options ? kOptionNames : kConfigNames;
  if (spec.head_dim < 2 || spec.head_dim > kMaxRotaryHeadDim)
    return bad(n.head_dim, "must be an integer from 2 to 65536",
               static_cast<double>(spec.head_dim));
  const std::int64_t rd = spec.rotary_dim == 0 ? spec.head_dim : spec.rotary_dim;
  if (rd < 2 || rd > spec.head_dim || rd % 2 != 0)
    return bad(n.rotary_dim,
               names == ArgumentNames::options
                   ? "must be an even integer from 2 to headDim"
                   : "must give an even rotary dim from 2 to head_dim (int(head_dim * factor))",
               static_cast<double>(rd));
  if (!finite(spec.base) || spec.base <= 1.0)
    return bad(n.base, "must be a finite number > 1", spec.base);
  if (spec.layout != RotaryLayout::half && spec.layout != RotaryLayout::interleaved &&
      spec.layout != RotaryLayout::deinterleave)
    return encoding_error(EncodingStatus::invalid_argument, "layout",
                          "must be 'half', 'interleaved' or 'deinterleave'");
  if (spec.vision != VisionRope::none && spec.head_dim % 4 != 0)
    return bad(n.head_dim, "must be a multiple of 4 for a vision 2D RoPE",
               static_cast<double>(spec.head_dim));
  if (is_multimodal(spec)) {
    const char* name = names == ArgumentNames::options ? "mropeSection" : "config.mrope_section";
    const auto& m = spec.mrope_section;
    const bool ok = m[0] >= 0 && m[1] >= 0 && m[2] >= 0 && m[0] <= rd && m[1] <= rd && m[2] <= rd;
    if (!ok || m[0] + m[1] + m[2] != rd / 2)
      return encoding_error(
          EncodingStatus::invalid_argument, name,
          "must be three counts (t, h, w) summing to rotaryDim / 2 = " + integer_text(rd / 2));
  }
  if (spec.arithmetic != FrequencyArithmetic::float64 &&
      spec.arithmetic != FrequencyArithmetic::hf_float32)
    return encoding_error(EncodingStatus::invalid_argument, "arithmetic",
                          "must be float64 or hf_float32");
  const RopeScaling& s = spec.scaling;
  const auto t = s.type;
  if (t == RopeScalingType::none) return {};
  if (t != RopeScalingType::linear && t != RopeScalingType::dynamic && t != RopeScalingType::yarn &&
      t != RopeScalingType::llama3 && t != RopeScalingType::longrope)
    return encoding_error(EncodingStatus::invalid_argument, n.type,
                          "must be 'linear', 'dynamic', 'yarn', 'llama3' or 'longrope'");
  // Upper limits keep every intermediate of the float32 chains finite (real models use factors
  // up to a few hundred).
  if (t == RopeScalingType::longrope) {
    if (!(s.factor > 0 && s.factor <= 1e6))
      return bad(n.factor, "must be a number > 0 and <= 1e6", s.factor);
  } else if (!(s.factor >= 1.0 && s.factor <= 1e6)) {
    return bad(n.factor, "must be a number from 1 to 1e6", s.factor);
  }
  // longrope's default attention factor divides by ln(L0): L0 >= 2 there.
  const double min_l0 = t == RopeScalingType::longrope ? 2.0 : 1.0;
  if (t != RopeScalingType::linear &&
      !(s.original_max_positions >= min_l0 && s.original_max_positions <= 2147483648.0))
    return bad(n.original,
               t == RopeScalingType::longrope ? "must be a number from 2 to 2^31"
                                              : "must be a number from 1 to 2^31",
               s.original_max_positions);
  if (!std::isnan(s.attention_factor) && !(s.attention_factor > 0 && s.attention_factor <= 1e6))
    return bad(n.attention, "must be a number > 0 and <= 1e6", s.attention_factor);
  if (t == RopeScalingType::llama3) {
    if (!(s.low_freq_factor > 0 && s.low_freq_factor <= 1e6))
      return bad(n.low_freq, "must be a number > 0 and <= 1e6", s.low_freq_factor);
    // Equal factors leave no smoothing band (Llama 4 Scout Instruct's config: 1 and 1).
    if (!(s.high_freq_factor >= s.low_freq_factor && s.high_freq_factor <= 1e6))
      return bad(n.high_freq, "must be a number >= the low frequency factor and <= 1e6",
                 s.high_freq_factor);
  }
  if (t == RopeScalingType::yarn) {
    if (!(s.beta_fast > 0 && s.beta_fast <= 1e6))
      return bad(n.beta_fast, "must be a number > 0 and <= 1e6", s.beta_fast);
    if (!(s.beta_slow > 0 && s.beta_slow <= 1e6))
      return bad(n.beta_slow, "must be a number > 0 and <= 1e6", s.beta_slow);
    if (!(s.mscale >= 0 && s.mscale <= 1e6))
      return bad(n.mscale, "must be a number from 0 to 1e6", s.mscale);
    if (!(s.mscale_all_dim >= 0 && s.mscale_all_dim <= 1e6))
      return bad(n.mscale_all_dim, "must be a number from 0 to 1e6", s.mscale_all_dim);
  }
  if (t == RopeScalingType::longrope) {
    EncodingError e = check_factors(n.short_factor, s.short_factor, rd / 2);
    if (!e.ok()) return e;
    e = check_factors(n.long_factor, s.long_factor, rd / 2);
    if (!e.ok()) return e;
  }
  return {};
}

const char* rope_scaling_name(RopeScalingType type) {
  switch (type) {
    case RopeScalingType::none:
      return "default";
    case RopeScalingType::linear:
      return "linear";
    case RopeScalingType::dynamic:
      return "dynamic";
    case RopeScalingType::yarn:
      return "yarn";
    case RopeScalingType::llama3:
      return "llama3";
    case RopeScalingType::longrope:
      return "longrope";
  }
  return "unknown";
}

bool rope_scaling_from_name(std::string_view name, RopeScalingType* out) {
  if (name == "default" || name == "none") {
    *out = RopeScalingType::none;
  } else if (name == "linear") {
    *out = RopeScalingType::linear;
  } else if (name == "dynamic") {
    *out = RopeScalingType::dynamic;
  } else if (name == "yarn") {
    *out = RopeScalingType::yarn;
  } else if (name == "llama3") {
    *out = RopeScalingType::llama3;
  } else if (name == "longrope" || name == "su") {  // HF's old name of longrope for Phi-3
    *out = RopeScalingType::longrope;
  } else {
    return false;
  }
  return true;
}

int mrope_row(const RotarySpec& spec, std::int64_t i) {
  const auto& s = spec.mrope_section;
  if (!is_multimodal(spec)) return 0;
  if (spec.mrope_interleaved) {
    // Qwen3-VL apply_interleaved_mrope: h at i % 3 == 1 below 3 * s[1], w at i % 3 == 2 below
    // 3 * s[2], t elsewhere.
    if (i % 3 == 1 && i < 3 * s[1]) return 1;
    if (i % 3 == 2 && i < 3 * s[2]) return 2;
    return 0;
  }
  // Qwen2-VL apply_multimodal_rotary_pos_emb: consecutive sections.
  if (i < s[0]) return 0;
  return i < s[0] + s[1] ? 1 : 2;
}

}  // namespace posenc
