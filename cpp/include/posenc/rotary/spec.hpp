// posenc: the description of one rotary position embedding (RoPE; Su et al., RoFormer, 2021) and
// how it is read from a Hugging Face config.json.
//
// A RotarySpec says which rotation is meant: the head size, how many of its channels rotate, the
// pairing of channels (layout), the base and the context-extension rule (scaling), and whether the
// frequencies are computed in float64 from the formula or reproduce Hugging Face's float32 buffer.
// validate() checks a spec before any frequency is computed; rotary_spec_from_hf_config() reads a
// model's config.json text into one (the JS API passes JSON.stringify(config); the model loader
// passes rope_scaling from safetensors metadata through the same rules).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "posenc/encoding_error.hpp"

namespace posenc {

// Which channels of a head form the pairs (x, y) that rotate together by angle p * w_i.
enum class RotaryLayout : std::uint8_t {
  // Pair i is channels (i, i + rotary_dim / 2): GPT-NeoX, LLaMA, Mistral, Qwen (HF rotate_half).
  half,
  // Pair i is channels (2i, 2i + 1): GPT-J, CodeGen, RoFormer (rotate_every_two), Cohere, GLM,
  // Llama 4 (complex pairs).
  interleaved,
  // Pair i is read from channels (2i, 2i + 1) and written to (i, i + rotary_dim / 2): DeepSeek-V3's
  // apply_rotary_pos_emb_interleave (de-interleave, then rotate_half). cos / sin as half.
  deinterleave,
};

// The context-extension rules of Hugging Face transformers
// (src/transformers/modeling_rope_utils.py, the _compute_*_parameters functions, rope_type in
// rope_scaling).
enum class RopeScalingType : std::uint8_t {
  none,      // "default": w_i = base^(-2i/d)
  linear,    // w_i / factor (_compute_linear_scaling_rope_parameters)
  dynamic,   // NTK: base * (factor * L / L0 - (factor - 1))^(d / (d - 2)) when L > L0, where L is
             // the largest position + 1 of the call and L0 the original context
             // (_compute_dynamic_ntk_parameters)
  yarn,      // YaRN: interpolation / extrapolation blend by a linear ramp over the pairs, and an
             // attention factor (_compute_yarn_parameters)
  llama3,    // Llama 3.1: low frequencies / factor, high kept, a smooth blend between
             // (_compute_llama3_parameters)
  longrope,  // LongRoPE / Phi-3: w_i / ext_i with ext = short_factor when L <= L0, long_factor
             // when L > L0, and an attention factor (_compute_longrope_parameters)
};

// The parameters of a scaling rule (HF rope_scaling keys in brackets). Every value is resolved:
// the config reader fills in HF's defaults, so nothing here is "unset" except attention_factor.
struct RopeScaling {
  RopeScalingType type = RopeScalingType::none;
  double factor = 1.0;  // [factor] 1..1e6 (linear, dynamic, yarn, llama3), longrope (0, 1e6]
  // L0, the context the model was trained with: [original_max_position_embeddings] (llama3, yarn,
  // longrope; HF falls back to max_position_embeddings), max_position_embeddings (dynamic).
  // 1..2^31 (longrope 2..2^31).
  double original_max_positions = 0.0;
  double low_freq_factor = 1.0;   // [low_freq_factor] llama3, (0, 1e6]
  double high_freq_factor = 4.0;  // [high_freq_factor] llama3, (low_freq_factor, 1e6]
  double beta_fast = 32.0;        // [beta_fast] yarn, (0, 1e6]
  double beta_slow = 1.0;         // [beta_slow] yarn, (0, 1e6]
  bool truncate = true;           // [truncate] yarn: floor/ceil the correction range
  // [attention_factor] yarn, longrope: multiplies cos and sin. NaN: HF's default
  // (yarn: 0.1 ln(factor) + 1, or the ratio of the mscale / mscale_all_dim forms; longrope:
  // sqrt(1 + ln(factor) / ln(L0)), 1 when factor <= 1). Given: > 0 and <= 1e6.
  double attention_factor = std::numeric_limits<double>::quiet_NaN();
  double mscale = 0.0;          // [mscale] yarn (0: unset)
  double mscale_all_dim = 0.0;  // [mscale_all_dim] yarn (0: unset)
  // longrope, rotary_dim / 2 values each, from 1e-6 to 1e6.
  std::vector<double> short_factor, long_factor;
};

// How the inverse frequencies are computed.
enum class FrequencyArithmetic : std::uint8_t {
  // base^(-2i/d) and every scaling step in float64 (explicit options).
  float64,
  // Hugging Face's float32 chain, bit for bit as correctly rounded IEEE float32 arithmetic gives
  // it: the exponent arange(0, d, 2).float() / d in float32, float32(base) raised to it in float32,
  // 1 / x as reciprocal, each scaling rule's own float32 steps (a Python scalar enters a float32
  // operation rounded to float32). That float32 buffer is the one the weights were trained with.
  hf_float32,
};

// The 2D RoPE of a vision tower: a patch at (row h, column w) turns frequency i by h for the first
// rotary_dim / 4 frequencies and by w for the rest (mrope_section {0, head_dim / 4, head_dim / 4},
// position rows h and w), rotate-half, every frequency from Hugging Face's float32 chain.
enum class VisionRope : std::uint8_t {
  none,
  // Qwen2-VL / Qwen2.5-VL: VisionRotaryEmbedding(head_dim / 2), w_k = 1 / theta^(2k / (head_dim /
  // 2)) for k < head_dim / 4, the same list for h and for w (rot_pos_emb).
  qwen,
  // Pixtral: PixtralRotaryEmbedding, f_j = 1 / theta^(2j / head_dim) for j < head_dim / 2; h takes
  // f_0, f_2, ..., w takes f_1, f_3, ...
  pixtral,
};

// The largest head_dim accepted.
inline constexpr std::int64_t kMaxRotaryHeadDim = 65536;

struct RotarySpec {
  std::int64_t head_dim = 0;    // channels per head, 2..kMaxRotaryHeadDim
  double base = 10000.0;        // theta, finite and > 1
  std::int64_t rotary_dim = 0;  // channels that rotate: even, 2..head_dim (0: head_dim); the
                                // rest of each head is left unchanged (partial rotary)
  RotaryLayout layout = RotaryLayout::half;
  RopeScaling scaling;
  FrequencyArithmetic arithmetic = FrequencyArithmetic::float64;
  // Multimodal RoPE (Qwen2-VL's mrope_section): empty, or three counts t, h, w summing to
  // rotary_dim / 2 (all 0: one position row); frequency i then turns by the position of row
  // mrope_row(i) of three position rows. Interleaved: Qwen3-VL's apply_interleaved_mrope order
  // instead of consecutive sections.
  std::array<std::int64_t, 3> mrope_section{};  // all 0: not multimodal
  bool mrope_interleaved = false;
  // Gemma 4's 'proportional' rule: only the first rope_angles frequencies (exponents over the
  // whole rotary_dim) are nonzero, the rest 0 (cos 1, sin 0). 0: every frequency.
  std::int64_t rope_angles = 0;
  // A vision tower's 2D RoPE (then head_dim is a multiple of 4, all of it rotates, layout half,
  // no scaling, hf_float32, and mrope_section is {0, head_dim / 4, head_dim / 4}).
  VisionRope vision = VisionRope::none;
};

// Whether spec is multimodal (mrope_section not all 0).
inline bool is_multimodal(const RotarySpec& spec) {
  return spec.mrope_section[0] != 0 || spec.mrope_section[1] != 0 || spec.mrope_section[2] != 0;
}

// Which position row (0 t, 1 h, 2 w) frequency i of a multimodal spec turns by.
int mrope_row(const RotarySpec& spec, std::int64_t i);

// Whether names in errors are the JavaScript options ("headDim", "scaling.factor") or the keys
// of a config.json ("config.head_dim", "config.rope_scaling.factor").
enum class ArgumentNames : std::uint8_t { options, hf_config };

// Checks every field of spec (rotary_dim 0 is taken as head_dim). Returns ok or the first problem,
// named as `names` says.
EncodingError validate(const RotarySpec& spec, ArgumentNames names = ArgumentNames::options);

// Reads a Hugging Face config.json (UTF-8 JSON text, not NUL-terminated) into *out, with the
// arithmetic hf_float32. Keys read (HF's names; the first present wins):
// - base: rope_theta, rotary_emb_base (GPT-NeoX), rope_scaling / rope_parameters .rope_theta;
//   else 10000
// - head_dim: head_dim (when not null; Mistral-Nemo's differs from hidden/heads), else
//   hidden_size / num_attention_heads, or n_embd / n_head (GPT-J), integer division
// - rotary_dim: rotary_dim (GPT-J, CodeGen: absolute; null is read as the full head, not GPT-J's
//   quirk of using n_embd), else int(head_dim * partial_rotary_factor), partial_rotary_factor or
//   rotary_pct (GPT-NeoX; 0.25 when model_type is gpt_neox and neither is given), else head_dim
// - layout: interleaved for model_type gptj and codegen, else half
// - rope_scaling, or rope_parameters (transformers 5, where rope_type may be absent: default);
//   null or absent: none. rope_type (or the older type); factor,
//   original_max_position_embeddings, low_freq_factor, high_freq_factor, beta_fast, beta_slow
//   (null or 0: 32 and 1, HF's `or`), truncate, attention_factor, mscale, mscale_all_dim,
//   short_factor, long_factor
// - max_position_embeddings (n_positions for GPT-J): L0 of dynamic, and of yarn and longrope
//   when no original_max_position_embeddings is given. A top-level
//   original_max_position_embeddings (Phi-3) wins over rope_scaling's for llama3, yarn and
//   longrope (standardize_rope_params). yarn and longrope without factor take
//   max_position_embeddings / L0.
// Unknown keys are ignored. Errors name the key ("config.rope_scaling.factor must be a number >=
// 1 (got 0.5)"); the spec is also validate()d with config key names.
// (Llama's rule for every model_type; read_hf_config in models.hpp reads each model's own.)
EncodingError rotary_spec_from_hf_config(const char* json, std::size_t size, RotarySpec* out);

// Reads only a rope_scaling object (JSON text, e.g. safetensors metadata) into *scaling, for a
// model whose other parameters are known; max_position_embeddings is HF's fallback for L0 (0 when
// unknown). Errors name "rope_scaling.<key>".
EncodingError rope_scaling_from_json(const char* json, std::size_t size,
                                     double max_position_embeddings, RopeScaling* scaling);

// The name of a scaling type as HF writes it ("default", "linear", ...), and back. Also accepts
// "none" for none.
const char* rope_scaling_name(RopeScalingType type);
bool rope_scaling_from_name(std::string_view name, RopeScalingType* out);

}  // namespace posenc
