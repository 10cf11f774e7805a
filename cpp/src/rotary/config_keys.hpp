// The key readers of config.json (config.cpp), shared by the model rules (models.cpp): each reads
// one key with Hugging Face's fallbacks and names the key in its error. Internal to the core.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/json_header.hpp"
#include "posenc/rotary/spec.hpp"

namespace posenc::rotary_config {

// A key of an object, or null when it is absent or JSON null (HF's getattr(..., None) / `or`).
const detail::JsonValue* member(const detail::JsonValue& obj, const char* key);
EncodingError wrong_type(const std::string& name, const char* what);
// The same for the key prefix + key (the name is built only here, when the error is returned).
EncodingError wrong_type(const std::string& prefix, const char* key, const char* what);
// The same for entry i of the list prefix + key ("config.layer_types[3]").
EncodingError wrong_entry(const std::string& prefix, const char* key, std::int64_t i,
                          const char* what);
// An optional finite number: *present false when absent or null.
EncodingError read_number(const detail::JsonValue& obj, const char* key, const std::string& prefix,
                          double* out, bool* present);
// An optional integer from 1 to 2^31 - 1.
EncodingError read_count(const detail::JsonValue& obj, const char* key, const std::string& prefix,
                         std::int64_t* out, bool* present);
EncodingError invalid_json(const char* name);

// How one layer's RoPE is read from a (text) config object.
struct RopeRead {
  std::string prefix = "config.";  // key names in errors ("config.text_config.")
  const char* model_type = "llama";
  RotaryLayout layout = RotaryLayout::half;
  const char* head_key = "head_dim";  // else hidden_size / num_attention_heads
  bool head_key_required = false;     // qk_rope_head_dim: no fallback
  std::int64_t head_default = 0;      // head_key's default (0: hidden_size / heads)
  double theta_default = 10000.0;     // rope_theta when no base key is given
  double partial_default = 1.0;       // partial_rotary_factor when none is given
  // The one key of the rotated share (GPT-NeoX: rotary_pct, which overwrites any
  // partial_rotary_factor), or null for the generic order.
  const char* partial_key = nullptr;
  // The scaling block (rope_scaling, rope_parameters or one layer type's entry of it), or null.
  const detail::JsonValue* block = nullptr;
  std::string block_name;          // "rope_scaling", "rope_parameters.full_attention", ...
  bool type_optional = false;      // rope_parameters may omit rope_type (default)
  bool block_theta_first = false;  // a per-layer-type block's rope_theta wins
  bool unscaled = false;           // the layer ignores the scaling block (Gemma 3 sliding layers)
  bool mrope_allowed = false;      // rope_type 'mrope' (Qwen2-VL) is the default rule
  const char* base_key = nullptr;  // a layer's own base key (rope_local_base_freq) ...
  double base_default = 10000.0;   // ... and its default
};

// Reads the RoPE of one layer into *out (validated, arithmetic hf_float32).
EncodingError read_rope(const detail::JsonValue& cfg, const RopeRead& how, RotarySpec* out);

}  // namespace posenc::rotary_config
