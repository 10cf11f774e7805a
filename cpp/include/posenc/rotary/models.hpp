// posenc: what a model's config.json says of its position handling, layer by layer, read by the
// rule of its model_type as that model's Hugging Face modeling file implements it.
//
// The rules are data: one row per model_type (rotary_model_rules()), each saying how the head is
// laid out (which channels pair, in which order the output is written), where the head dim and
// the rotated channels come from, which layers have which RoPE (or none), and how each layer
// masks attention. read_hf_config() resolves one decoder layer of a config into a RotarySpec
// and a ModelLayer. A model_type that has no row is refused unless the caller asks for Llama's
// rule; a config without model_type (hand-written) is read by Llama's rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "posenc/encoding_error.hpp"
#include "posenc/rotary/spec.hpp"

namespace posenc {

// Where a row's head dim comes from.
enum class HeadDimSource : std::uint8_t {
  standard,       // head_dim, else hidden_size / num_attention_heads (n_embd / n_head)
  qk_rope,        // qk_rope_head_dim: the rope part of a split head (DeepSeek-V2/V3)
  global_layers,  // global_head_dim on proportional full-attention layers, head_dim on the others
                  // (Gemma 4)
};

// Which layers of a model have which RoPE.
enum class LayerRope : std::uint8_t {
  every,           // every layer the same RoPE
  local_base,      // sliding layers: rope_local_base_freq, unscaled; full layers: rope_theta and
                   // rope_scaling (Gemma 3, Gemma 3n)
  sliding_only,    // only sliding-window layers rotate (Cohere2)
  no_rope_layers,  // no_rope_layers[i] == 0 marks a layer without RoPE; by default every
                   // no_rope_layer_interval-th (4) layer (Llama 4, SmolLM3)
  full_only,       // linear-attention layers have none (Qwen3-Next, Qwen3.5)
  unless_alibi,    // no RoPE anywhere when the config sets alibi (Falcon)
};

// How layer_types is filled in when a config does not write it.
enum class LayerTypes : std::uint8_t {
  none,                 // no layer types (every layer causal, full attention)
  sliding_pattern,      // every sliding_window_pattern-th layer (1-based) full, the rest sliding
  alternate,            // even layers sliding, odd full (Gemma 2, gpt-oss)
  full_interval,        // every full_attention_interval-th layer full, the rest linear_attention
  chunked_unless_nope,  // chunked_attention on RoPE layers, full_attention on NoPE layers (Llama 4)
  sliding_from_window,  // every layer sliding when sliding_window is set (Mistral, Mixtral)
  qwen2_window,         // sliding from max_window_layers on when use_sliding_window (Qwen2)
  qwen2_moe_window,     // sliding on even layers below max_window_layers (Qwen2-MoE)
  mistral_window,       // sliding_window, 4096 when the key is absent, none when null (Mistral)
  all_from_flag,        // every layer sliding when use_sliding_window (Qwen3-MoE)
};

// Multimodal RoPE (three position rows t, h, w).
enum class MultimodalRope : std::uint8_t {
  none,
  sections,     // mrope_section: consecutive frequency sections t | h | w (Qwen2-VL, Qwen2.5-VL)
  interleaved,  // mrope_section, frequencies i % 3 of the sections interleaved (Qwen3-VL)
  by_flag,      // interleaved when mrope_interleaved is true, else sections (Qwen3.5)
};

// One row of the table. The fields are small and ordered so that no row has a run of more than 8
// zero bytes in the wasm (4-byte pointers): binaryen splits the data section at longer runs, and
// 60 rows of mostly-zero doubles and int64s had become 230 segments, about 4 KB of the gzipped
// module. Every default below is exact in its type.
struct RotaryModelRule {
  const char* model_type;  // as config.json writes it
  // partial_rotary_factor when the config gives none (its configuration class's default).
  float partial_default = 1.0f;
  RotaryLayout layout = RotaryLayout::half;
  HeadDimSource head_dim = HeadDimSource::standard;
  LayerRope rope = LayerRope::every;
  LayerTypes layer_types = LayerTypes::none;
  MultimodalRope multimodal = MultimodalRope::none;
  std::uint8_t mrope_default[3] = {0, 0, 0};  // mrope_section (t, h, w) when the config has none
  const char* family;  // the HF modeling file's family ("llama", "gemma3", ...)
  // sliding_window_pattern / full_attention_interval / no-rope interval / Mistral's window.
  std::uint16_t pattern_default = 0;
  // The configuration class's defaults where a config omits a key (0: none, the generic rule).
  std::uint16_t head_dim_default = 0;  // head_dim (Llama 4: 128, not hidden / heads)
  float base_default = 1e4f;           // rope_theta (integers below 2^24)
  // DeepSeek: the softmax scale is multiplied by mscale(factor, mscale_all_dim)^2 under yarn.
  bool mscale_softmax = false;
  // Llama 4: NoPE layers scale queries by a position temperature (attn_temperature_tuning).
  bool nope_temperature = false;
  bool last_layer_full = false;  // layer_types: the last layer is full attention (Gemma 4)
};

// Every row, in a fixed order; count via rotary_model_rule_count().
const RotaryModelRule* rotary_model_rules();
std::size_t rotary_model_rule_count();
// The row of a model_type, or null.
const RotaryModelRule* find_rotary_model_rule(std::string_view model_type);

// What one decoder layer of a config does with positions besides its RoPE.
struct ModelLayer {
  std::string model_type;       // the row used ("llama" for a config without model_type)
  std::string layer_type;       // the config's own layer type ("sliding_attention", ...), or ""
  std::int64_t layer = -1;      // the layer described (-1: the config's layers all alike)
  std::int64_t num_layers = 0;  // num_hidden_layers (0 when the config does not say)
  bool has_rope = true;
  bool layers_differ = false;       // the layers' RoPE differs (theta, scaling, head dim, presence)
  std::int64_t sliding_window = 0;  // keys a query sees (itself included); 0: no window
  std::int64_t attention_chunk = 0;  // chunked attention's chunk size; 0: none
  bool linear_attention = false;     // a linear-attention layer (no attention mask)
  // Both sides attend (Gemma 4 use_bidirectional_attention); sliding_window then bounds |q - k|
  // from above: a key is seen when |q - k| <= sliding_window.
  bool bidirectional = false;
  // Llama 4 NoPE layers: queries times log(floor((p + 1) / floor_scale) + 1) * attn_scale + 1.
  bool query_temperature = false;
  double floor_scale = 0.0, attn_scale = 0.0;
  // The factor the model's RoPE scaling puts on its softmax scale (1 where none).
  double softmax_scale_factor = 1.0;
};

struct HfConfigRequest {
  std::int64_t layer = -1;  // the decoder layer, or -1 (then the layers must not differ)
  bool llama_rule = false;  // read an unknown model_type by Llama's rule
};

// Reads one layer of a Hugging Face config.json (UTF-8 JSON text, not NUL-terminated): its RoPE
// into *spec (arithmetic hf_float32; untouched when the layer has none) and the rest into *layer.
// The RoPE keys come from text_config when the config nests one (multimodal configs). Errors name
// the config key or "layer" / "modelRule".
EncodingError read_hf_config(const char* json, std::size_t size, const HfConfigRequest& request,
                             RotarySpec* spec, ModelLayer* layer);

}  // namespace posenc
