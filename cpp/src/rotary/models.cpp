// The model rules (one row per model_type, as each family's Hugging Face modeling and
// configuration files implement it) and read_hf_config(): which RoPE, if any, one decoder layer of
// a config.json has, and how that layer masks attention. The sources of each row are named beside
// it; tests/fixtures/rotary/models/ holds a PyTorch port of each family that the tests compare
// with.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "math/exact_math.hpp"
#include "posenc/rotary/models.hpp"
#include "rotary/config_keys.hpp"

namespace posenc {

using detail::JsonValue;
using namespace rotary_config;

namespace {

using L = RotaryLayout;
using H = HeadDimSource;
using R = LayerRope;
using T = LayerTypes;
using M = MultimodalRope;

// clang-format off
const RotaryModelRule kRules[] = {
  // Llama's rule: rotate_half over int(head_dim * partial_rotary_factor) channels
  // (modeling_llama.py apply_rotary_pos_emb; modeling_rope_utils.py).
  {"llama", 1.0f, L::half, H::standard, R::every, T::none, M::none, {}, "llama"},
  {"mistral", 1.0f, L::half, H::standard, R::every, T::mistral_window, M::none, {},
   "mistral", 4096},
  {"mixtral", 1.0f, L::half, H::standard, R::every, T::sliding_from_window, M::none, {},
   "mixtral", 0, 0, 1e6f},
  {"qwen2", 1.0f, L::half, H::standard, R::every, T::qwen2_window, M::none, {}, "qwen2"},
  {"qwen2_moe", 1.0f, L::half, H::standard, R::every, T::qwen2_moe_window, M::none, {},
   "qwen2_moe"},
  {"qwen3", 1.0f, L::half, H::standard, R::every, T::qwen2_window, M::none, {}, "qwen3", 0, 128},
  {"qwen3_moe", 1.0f, L::half, H::standard, R::every, T::all_from_flag, M::none, {}, "qwen3_moe"},
  {"olmo", 1.0f, L::half, H::standard, R::every, T::none, M::none, {}, "olmo"},
  {"olmo2", 1.0f, L::half, H::standard, R::every, T::none, M::none, {}, "olmo2"},
  {"olmoe", 1.0f, L::half, H::standard, R::every, T::none, M::none, {}, "olmoe"},
  {"granite", 1.0f, L::half, H::standard, R::every, T::none, M::none, {}, "granite"},
  {"granitemoe", 1.0f, L::half, H::standard, R::every, T::none, M::none, {}, "granitemoe"},
  {"minicpm", 1.0f, L::half, H::standard, R::every, T::none, M::none, {}, "minicpm"},
  {"internlm2", 1.0f, L::half, H::standard, R::every, T::none, M::none, {}, "internlm2"},
  {"gemma", 1.0f, L::half, H::standard, R::every, T::none, M::none, {}, "gemma", 0, 256},
  {"gemma2", 1.0f, L::half, H::standard, R::every, T::alternate, M::none, {}, "gemma2", 0, 256},
  {"gpt_oss", 1.0f, L::half, H::standard, R::every, T::alternate, M::none, {},
   "gpt_oss", 0, 64, 1.5e5f},
  // Gemma 3 / 3n: sliding layers rotate with rope_local_base_freq, unscaled
  // (modeling_gemma3.py Gemma3TextModel.rotary_emb_local).
  {"gemma3_text", 1.0f, L::half, H::standard, R::local_base, T::sliding_pattern, M::none, {},
   "gemma3", 6, 256, 1e6f},
  {"gemma3", 1.0f, L::half, H::standard, R::local_base, T::sliding_pattern, M::none, {},
   "gemma3", 6, 256, 1e6f},
  {"gemma3n_text", 1.0f, L::half, H::standard, R::local_base, T::sliding_pattern, M::none, {},
   "gemma3n", 5, 256, 1e6f},
  {"gemma3n", 1.0f, L::half, H::standard, R::local_base, T::sliding_pattern, M::none, {},
   "gemma3n", 5, 256, 1e6f},
  // rotate_every_two over rotary_dim channels (modeling_gptj.py, modeling_codegen.py).
  {"gptj", 1.0f, L::interleaved, H::standard, R::every, T::none, M::none, {}, "gptj"},
  {"codegen", 1.0f, L::interleaved, H::standard, R::every, T::none, M::none, {}, "codegen"},
  {"gpt_neox", 0.25f, L::half, H::standard, R::every, T::none, M::none, {}, "gpt_neox"},
  {"phi", 0.5f, L::half, H::standard, R::every, T::none, M::none, {}, "phi"},
  {"phi3", 1.0f, L::half, H::standard, R::every, T::sliding_from_window, M::none, {}, "phi3"},
  {"stablelm", 0.25f, L::half, H::standard, R::every, T::none, M::none, {}, "stablelm"},
  {"persimmon", 0.5f, L::half, H::standard, R::every, T::none, M::none, {}, "persimmon"},
  {"falcon", 1.0f, L::half, H::standard, R::unless_alibi, T::none, M::none, {}, "falcon"},
  // GLM: cos/sin of the first half repeat-interleaved onto interleaved pairs
  // (modeling_glm.py apply_rotary_pos_emb), partial_rotary_factor 0.5.
  {"glm", 0.5f, L::interleaved, H::standard, R::every, T::none, M::none, {}, "glm", 0, 128},
  {"glm4", 0.5f, L::interleaved, H::standard, R::every, T::none, M::none, {}, "glm4", 0, 128},
  {"glm4_moe", 0.5f, L::half, H::standard, R::every, T::none, M::none, {}, "glm4_moe"},
  {"helium", 1.0f, L::interleaved, H::standard, R::every, T::none, M::none, {},
   "helium", 0, 128, 1e5f},
  {"cohere", 1.0f, L::interleaved, H::standard, R::every, T::none, M::none, {},
   "cohere", 0, 0, 5e5f},
  {"cohere2", 1.0f, L::interleaved, H::standard, R::sliding_only, T::sliding_pattern, M::none, {},
   "cohere2", 4},
  {"smollm3", 1.0f, L::half, H::standard, R::no_rope_layers, T::qwen2_window, M::none, {},
   "smollm3", 4, 0, 2e6f},
  // Llama 4: complex pairs (modeling_llama4.py apply_rotary_emb), NoPE every 4th layer with a
  // query temperature, chunked attention on the RoPE layers.
  {"llama4_text", 1.0f, L::interleaved, H::standard, R::no_rope_layers,
   T::chunked_unless_nope, M::none, {}, "llama4", 4, 128, 5e5f, false, true},
  {"llama4", 1.0f, L::interleaved, H::standard, R::no_rope_layers,
   T::chunked_unless_nope, M::none, {}, "llama4", 4, 128, 5e5f, false, true},
  // DeepSeek: RoPE on the qk_rope_head_dim channels split off each head
  // (modeling_deepseek_v3.py apply_rotary_pos_emb_interleave; modeling_deepseek_v2.py).
  {"deepseek_v3", 1.0f, L::deinterleave, H::qk_rope, R::every, T::none, M::none, {},
   "deepseek_v3", 0, 0, 1e4f, true},
  {"kimi_k2", 1.0f, L::deinterleave, H::qk_rope, R::every, T::none, M::none, {},
   "deepseek_v3", 0, 0, 1e4f, true},
  {"deepseek_v2", 1.0f, L::interleaved, H::qk_rope, R::every, T::none, M::none, {}, "deepseek_v2"},
  {"qwen3_next", 0.25f, L::half, H::standard, R::full_only, T::full_interval, M::none, {},
   "qwen3_next", 4},
  // Multimodal RoPE (modeling_qwen2_vl.py apply_multimodal_rotary_pos_emb; modeling_qwen3_vl.py
  // apply_interleaved_mrope).
  {"qwen2_vl", 1.0f, L::half, H::standard, R::every, T::qwen2_window, M::sections, {},
   "qwen2_vl", 0, 0, 1e6f},
  {"qwen2_vl_text", 1.0f, L::half, H::standard, R::every, T::qwen2_window, M::sections, {},
   "qwen2_vl", 0, 0, 1e6f},
  {"qwen2_5_vl_text", 1.0f, L::half, H::standard, R::every, T::qwen2_window, M::sections, {},
   "qwen2_5_vl", 0, 0, 1e6f},
  {"qwen2_5_vl", 1.0f, L::half, H::standard, R::every, T::qwen2_window, M::sections, {},
   "qwen2_5_vl", 0, 0, 1e6f},
  {"qwen3_vl", 1.0f, L::half, H::standard, R::every, T::qwen2_window, M::interleaved, {24, 20, 20},
   "qwen3_vl"},
  {"qwen3_vl_text", 1.0f, L::half, H::standard, R::every,
   T::qwen2_window, M::interleaved, {24, 20, 20}, "qwen3_vl"},
  {"qwen3_vl_moe", 1.0f, L::half, H::standard, R::every,
   T::qwen2_window, M::interleaved, {24, 20, 20}, "qwen3_vl_moe"},
  {"qwen3_vl_moe_text", 1.0f, L::half, H::standard, R::every,
   T::qwen2_window, M::interleaved, {24, 20, 20}, "qwen3_vl_moe"},
  // GLM-4.1V: interleaved pairs on half the head; GLM-4.5V: halves (modeling_glm4v.py,
  // modeling_glm4v_moe.py apply_multimodal_rotary_pos_emb).
  {"glm4v", 0.5f, L::interleaved, H::standard, R::every, T::none, M::sections, {8, 12, 12},
   "glm4v"},
  {"glm4v_text", 0.5f, L::interleaved, H::standard, R::every, T::none, M::sections, {8, 12, 12},
   "glm4v"},
  {"glm4v_moe", 0.5f, L::half, H::standard, R::every, T::none, M::sections, {8, 12, 12},
   "glm4v_moe"},
  {"glm4v_moe_text", 0.5f, L::half, H::standard, R::every, T::none, M::sections, {8, 12, 12},
   "glm4v_moe"},
  // Gemma 4: rope_parameters per layer type; full layers 'proportional' on global_head_dim
  // (modeling_gemma4.py Gemma4TextRotaryEmbedding; configuration_gemma4.py).
  {"gemma4_text", 1.0f, L::half, H::global_layers, R::every, T::sliding_pattern, M::none, {},
   "gemma4", 6, 0, 1e4f, false, false, true},
  {"gemma4", 1.0f, L::half, H::global_layers, R::every, T::sliding_pattern, M::none, {},
   "gemma4", 6, 0, 1e4f, false, false, true},
  {"qwen3_5", 0.25f, L::half, H::standard, R::full_only,
   T::full_interval, M::interleaved, {11, 11, 10}, "qwen3_5", 4},
  {"qwen3_5_text", 0.25f, L::half, H::standard, R::full_only,
   T::full_interval, M::interleaved, {11, 11, 10}, "qwen3_5", 4},
  {"qwen3_5_moe", 0.25f, L::half, H::standard, R::full_only,
   T::full_interval, M::interleaved, {11, 11, 10}, "qwen3_5_moe", 4},
  {"qwen3_5_moe_text", 0.25f, L::half, H::standard, R::full_only,
   T::full_interval, M::interleaved, {11, 11, 10}, "qwen3_5_moe", 4},
};
// clang-format on

constexpr std::size_t kRuleCount = sizeof(kRules) / sizeof(kRules[0]);

bool is_object(const JsonValue* v) {
  return v != nullptr && v->type == JsonValue::Type::object;
}

bool truthy(const JsonValue& cfg, const char* key, bool fallback) {
  const JsonValue* v = member(cfg, key);
  if (v == nullptr) return fallback;
  if (v->type == JsonValue::Type::boolean) return v->boolean;
  if (v->type == JsonValue::Type::number) return v->number != 0;
  return fallback;
}

EncodingError bad_layer(const std::string& what) {
  return encoding_error(EncodingStatus::invalid_argument, "layer", what);
}

// Layer i of a per-layer list (layer_types, no_rope_layers) that is shorter.
EncodingError beyond_list(const std::string& p, const char* key, std::size_t size, std::int64_t i) {
  return bad_layer("must be below the length of " + p + key + " (" +
                   integer_text(static_cast<std::int64_t>(size)) + "), got " + integer_text(i));
}

// The config's layer_types entry of layer i ("" when none), as written or as the rule fills it
// in. use_rope: whether the layer rotates (no_rope_layers), for the rules that derive types
// from it.
// *unnamed_sliding: a sliding window on a layer that the config class gives no layer type
// (Mistral, Phi-3, Qwen3-MoE: one window for every layer).
EncodingError layer_type_of(const JsonValue& cfg, const std::string& p, const RotaryModelRule& rule,
                            std::int64_t i, bool use_rope, std::string* out,
                            bool* unnamed_sliding) {
  out->clear();
  *unnamed_sliding = false;
  if (const JsonValue* lt = member(cfg, "layer_types")) {
    if (lt->type != JsonValue::Type::array)
      return wrong_type(p, "layer_types", "an array of strings");
    if (i >= static_cast<std::int64_t>(lt->items.size()))
      return beyond_list(p, "layer_types", lt->items.size(), i);
    const JsonValue& v = lt->items[static_cast<std::size_t>(i)];
    if (v.type != JsonValue::Type::string) return wrong_entry(p, "layer_types", i, "a string");
    *out = v.string;
    return {};
  }
  // The rule's type of the layer (null: none), written to *out once at the end.
  const char* sliding = "sliding_attention";
  const char* full = "full_attention";
  const char* type = nullptr;
  bool present = false;
  double n = rule.pattern_default;
  switch (rule.layer_types) {
    case T::none:
      break;
    case T::sliding_pattern: {
      if (EncodingError e = read_number(cfg, "sliding_window_pattern", p, &n, &present); !e.ok())
        return e;
      if (!(n >= 1 && n == std::floor(n)))
        return wrong_type(p, "sliding_window_pattern", "an integer >= 1");
      type = (i + 1) % static_cast<std::int64_t>(n) != 0 ? sliding : full;
      if (rule.last_layer_full) {
        double layers = 0;
        if (EncodingError e = read_number(cfg, "num_hidden_layers", p, &layers, &present); !e.ok())
          return e;
        if (present && static_cast<double>(i) == layers - 1) type = full;
      }
      break;
    }
    case T::alternate:
      type = (i + 1) % 2 != 0 ? sliding : full;
      break;
    case T::full_interval: {
      if (EncodingError e = read_number(cfg, "full_attention_interval", p, &n, &present); !e.ok())
        return e;
      if (!(n >= 1 && n == std::floor(n)))
        return wrong_type(p, "full_attention_interval", "an integer >= 1");
      type = (i + 1) % static_cast<std::int64_t>(n) != 0 ? "linear_attention" : full;
      break;
    }
    case T::chunked_unless_nope:
      type = use_rope ? "chunked_attention" : full;
      break;
    case T::sliding_from_window:
      *unnamed_sliding = member(cfg, "sliding_window") != nullptr;
      break;
    case T::mistral_window:
      // MistralConfig: sliding_window defaults to 4096 when the key is absent; null: causal.
      *unnamed_sliding =
          cfg.find("sliding_window") == nullptr || member(cfg, "sliding_window") != nullptr;
      break;
    case T::all_from_flag:
      *unnamed_sliding =
          truthy(cfg, "use_sliding_window", false) && member(cfg, "sliding_window") != nullptr;
      break;
    case T::qwen2_moe_window: {
      type = full;
      if (!truthy(cfg, "use_sliding_window", false) || member(cfg, "sliding_window") == nullptr)
        break;
      double last = 28;  // Qwen2MoeConfig max_window_layers
      if (EncodingError e = read_number(cfg, "max_window_layers", p, &last, &present); !e.ok())
        return e;
      if (static_cast<double>(i) < last && i % 2 == 0) type = sliding;
      break;
    }
    case T::qwen2_window: {
      type = full;
      const JsonValue* use = member(cfg, "use_sliding_window");
      if (use == nullptr || use->type != JsonValue::Type::boolean || !use->boolean ||
          member(cfg, "sliding_window") == nullptr)
        break;
      double first = 28;  // Qwen2Config max_window_layers
      if (EncodingError e = read_number(cfg, "max_window_layers", p, &first, &present); !e.ok())
        return e;
      if (static_cast<double>(i) >= first) type = sliding;
      break;
    }
  }
  if (type != nullptr) *out = type;
  return {};
}

// Whether layer i rotates by the no_rope_layers rule (1 or true: RoPE; default: every
// interval-th layer has none).
EncodingError no_rope_rule(const JsonValue& cfg, const std::string& p, const RotaryModelRule& rule,
                           std::int64_t i, bool* use_rope) {
  const JsonValue* list = member(cfg, "no_rope_layers");
  if (list != nullptr && list->type == JsonValue::Type::array && !list->items.empty()) {
    if (i >= static_cast<std::int64_t>(list->items.size()))
      return beyond_list(p, "no_rope_layers", list->items.size(), i);
    const JsonValue& v = list->items[static_cast<std::size_t>(i)];
    if (v.type == JsonValue::Type::boolean) {
      *use_rope = v.boolean;
    } else if (v.type == JsonValue::Type::number && (v.number == 0 || v.number == 1)) {
      *use_rope = v.number == 1;
    } else {
      return wrong_entry(p, "no_rope_layers", i, "0, 1, true or false");
    }
    return {};
  }
  if (list != nullptr && list->type != JsonValue::Type::array)
    return wrong_type(p, "no_rope_layers", "an array of 0 and 1");
  double interval = rule.pattern_default;
  bool present = false;
  if (EncodingError e = read_number(cfg, "no_rope_layer_interval", p, &interval, &present); !e.ok())
    return e;
  if (!(interval >= 1 && interval == std::floor(interval)))
    return wrong_type(p, "no_rope_layer_interval", "an integer >= 1");
  *use_rope = (i + 1) % static_cast<std::int64_t>(interval) != 0;
  return {};
}

// What the request resolves to before the RoPE is read.
struct Context {
  const JsonValue* cfg = nullptr;  // the text config
  std::string prefix;              // "config." or "config.text_config."
  const RotaryModelRule* rule = nullptr;
  std::string model_type;
};

// One layer: its RoPE (or none) and everything else of ModelLayer except layers_differ.
EncodingError read_layer(const Context& c, std::int64_t i, RotarySpec* spec, ModelLayer* out) {
  const JsonValue& cfg = *c.cfg;
  const std::string& p = c.prefix;
  const RotaryModelRule& rule = *c.rule;
  ModelLayer layer;
  layer.model_type = c.model_type;
  layer.layer = i;
  bool use_rope = true;
  const std::int64_t at = i < 0 ? 0 : i;
  if (rule.rope == R::no_rope_layers) {
    if (EncodingError e = no_rope_rule(cfg, p, rule, at, &use_rope); !e.ok()) return e;
  }
  bool unnamed_sliding = false;
  if (EncodingError e =
          layer_type_of(cfg, p, rule, at, use_rope, &layer.layer_type, &unnamed_sliding);
      !e.ok())
    return e;
  const std::string& type = layer.layer_type;
  if (rule.rope == R::sliding_only && type != "sliding_attention") use_rope = false;
  if (rule.rope == R::full_only && type == "linear_attention") use_rope = false;
  if (rule.rope == R::unless_alibi && truthy(cfg, "alibi", false)) use_rope = false;
  layer.linear_attention = type == "linear_attention";
  bool present = false;
  if (type == "sliding_attention" || unnamed_sliding) {
    double w = rule.layer_types == T::mistral_window ? rule.pattern_default : 0;
    if (EncodingError e = read_number(cfg, "sliding_window", p, &w, &present); !e.ok()) return e;
    if (present && !(w >= 1 && w == std::floor(w)))
      return wrong_type(p, "sliding_window", "an integer >= 1");
    layer.sliding_window = static_cast<std::int64_t>(w);
  }
  // Gemma 4 use_bidirectional_attention 'all': every layer sees both sides; a sliding layer
  // |q - k| <= sliding_window // 2 + 1 (configuration_gemma4.py, masking_utils.py).
  const JsonValue* bidi = member(cfg, "use_bidirectional_attention");
  if (bidi != nullptr && ((bidi->type == JsonValue::Type::string && bidi->string == "all") ||
                          (bidi->type == JsonValue::Type::boolean && bidi->boolean))) {
    layer.bidirectional = true;
    if (layer.sliding_window > 0) layer.sliding_window = layer.sliding_window / 2 + 1;
  }
  if (type == "chunked_attention") {
    double chunk = 8192;  // Llama4TextConfig attention_chunk_size
    if (EncodingError e = read_number(cfg, "attention_chunk_size", p, &chunk, &present); !e.ok())
      return e;
    if (!(chunk >= 1 && chunk == std::floor(chunk)))
      return wrong_type(p, "attention_chunk_size", "an integer >= 1");
    layer.attention_chunk = static_cast<std::int64_t>(chunk);
  }
  if (rule.nope_temperature && !use_rope && truthy(cfg, "attn_temperature_tuning", true)) {
    layer.query_temperature = true;
    layer.floor_scale = 8192;  // Llama4TextConfig defaults
    layer.attn_scale = 0.1;
    if (EncodingError e = read_number(cfg, "floor_scale", p, &layer.floor_scale, &present); !e.ok())
      return e;
    if (EncodingError e = read_number(cfg, "attn_scale", p, &layer.attn_scale, &present); !e.ok())
      return e;
    if (!(layer.floor_scale > 0)) return wrong_type(p, "floor_scale", "a number > 0");
  }
  layer.has_rope = use_rope;
  if (!use_rope) {
    *out = std::move(layer);
    return {};
  }

  RopeRead how;
  how.prefix = p;
  how.model_type = rule.model_type;
  how.layout = rule.layout;
  how.partial_default = rule.partial_default;
  how.mrope_allowed = rule.multimodal != M::none;
  how.head_default = rule.head_dim_default;
  // GPTNeoXConfig.convert_rope_params_to_dict assigns partial_rotary_factor = rotary_pct.
  if (std::string_view(rule.family) == "gpt_neox") how.partial_key = "rotary_pct";
  how.theta_default = rule.base_default;
  if (rule.head_dim == H::qk_rope) {
    how.head_key = "qk_rope_head_dim";
    how.head_key_required = true;
    how.partial_default = 1.0;
    // DeepSeek-V3: rope_interleave (default true) de-interleaves; false rotates halves.
    if (rule.layout == L::deinterleave && !truthy(cfg, "rope_interleave", true))
      how.layout = L::half;
  }
  // The scaling block: rope_scaling (transformers 4) or rope_parameters (transformers 5), which
  // may hold one entry per layer type.
  const JsonValue* block = member(cfg, "rope_scaling");
  how.block_name = "rope_scaling";
  if (block == nullptr) {
    block = member(cfg, "rope_parameters");
    how.block_name = "rope_parameters";
    how.type_optional = true;
  }
  bool per_type = false;
  if (is_object(block) && !type.empty() && is_object(block->find(type)) &&
      block->find("rope_type") == nullptr) {
    block = block->find(type);
    how.block_name += "." + type;
    how.block_theta_first = true;
    per_type = true;
  }
  // Gemma 3: an old-style rope_scaling (type, not rope_type) is merged into the full layers'
  // parameters, whose rope_type is already 'default', and has no effect (configuration_gemma3.py,
  // transformers 5 standardize_rope_params' setdefault).
  if (rule.rope == R::local_base && !per_type && is_object(block) &&
      block->find("rope_type") == nullptr && block->find("type") != nullptr &&
      std::string_view(rule.family) == "gemma3")
    block = nullptr;
  // Gemma 4 without rope_parameters: Gemma4TextConfig's defaults for its full layers, parsed once
  // (a JsonValue built member by member linked the copying of values and key vectors).
  static const JsonValue kGemma4Full = [] {
    static const char kText[] =
        R"({"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1000000})";
    JsonValue v;
    detail::parse_json(kText, sizeof kText - 1, &v);
    return v;
  }();
  if (rule.head_dim == H::global_layers && block == nullptr && type == "full_attention") {
    block = &kGemma4Full;
    how.block_name = "rope_parameters.full_attention";
    how.block_theta_first = true;
    how.type_optional = true;
  }
  how.block = block;
  // Gemma 4: a full layer's proportional RoPE turns the global head (global_head_dim).
  if (rule.head_dim == H::global_layers && is_object(block)) {
    const JsonValue* t = member(*block, "rope_type");
    if (t != nullptr && t->type == JsonValue::Type::string && t->string == "proportional" &&
        member(cfg, "global_head_dim") != nullptr)
      how.head_key = "global_head_dim";
  }
  if (rule.rope == R::local_base && !per_type && type == "sliding_attention") {
    how.base_key = "rope_local_base_freq";
    how.base_default = 10000.0;
    how.unscaled = true;
  }
  if (EncodingError e = read_rope(cfg, how, spec); !e.ok()) return e;
  // Multimodal sections: the block's mrope_section, else the config's.
  if (rule.multimodal != M::none) {
    const JsonValue* sec = is_object(block) ? member(*block, "mrope_section") : nullptr;
    std::string sec_name = p + how.block_name + ".mrope_section";
    if (sec == nullptr) {
      sec = member(cfg, "mrope_section");
      sec_name = p + "mrope_section";
    }
    static const JsonValue kNone;
    if (sec == nullptr &&
        rule.mrope_default[0] + rule.mrope_default[1] + rule.mrope_default[2] > 0) {
      // The configuration class's default sections (Qwen3-VL, Qwen3.5, GLM-4V).
      for (int k = 0; k < 3; ++k)
        spec->mrope_section[static_cast<std::size_t>(k)] = rule.mrope_default[k];
      sec = &kNone;
    }
    if (sec == nullptr)
      return encoding_error(EncodingStatus::invalid_config, p + how.block_name + ".mrope_section",
                            std::string("is required by model_type '") + rule.model_type + "'");
    if (sec != &kNone && (sec->type != JsonValue::Type::array || sec->items.size() != 3))
      return wrong_type(sec_name, "an array of three integers (t, h, w)");
    std::size_t k = 0;
    for (const JsonValue& v : sec->items) {
      if (v.type != JsonValue::Type::number || !(v.number >= 0 && v.number <= 65536) ||
          v.number != std::floor(v.number))
        return wrong_type(sec_name, "an array of three integers (t, h, w)");
      spec->mrope_section[k++] = static_cast<std::int64_t>(v.number);
    }
    spec->mrope_interleaved = rule.multimodal == M::interleaved;
    const std::int64_t half = spec->rotary_dim / 2;
    const std::int64_t sum =
        spec->mrope_section[0] + spec->mrope_section[1] + spec->mrope_section[2];
    if (sum != half)
      return encoding_error(
          EncodingStatus::invalid_argument, sec_name,
          "must sum to rotaryDim / 2 = " + integer_text(half) + ", got " + integer_text(sum));
  }
  // DeepSeek-V3 (DeepseekV3Attention.__init__): under a scaling rule with mscale_all_dim and a
  // factor > 1, softmax_scale *= mscale(factor, mscale_all_dim)^2, mscale = 0.1 m ln(f) + 1.
  // math::log (correctly rounded, as the rest of the rotary code): libm's log brought its 4 KB
  // table into the wasm.
  const RopeScaling& s = spec->scaling;
  if (rule.mscale_softmax && s.type != RopeScalingType::none && s.mscale_all_dim != 0 &&
      s.factor > 1) {
    const double m = 0.1 * s.mscale_all_dim * math::log(s.factor) + 1.0;
    layer.softmax_scale_factor = m * m;
  }
  *out = std::move(layer);
  return {};
}

bool same_rope(const ModelLayer& a, const RotarySpec& sa, const ModelLayer& b,
               const RotarySpec& sb) {
  if (a.has_rope != b.has_rope) return false;
  if (!a.has_rope) return true;
  const RopeScaling &x = sa.scaling, &y = sb.scaling;
  return sa.head_dim == sb.head_dim && sa.rotary_dim == sb.rotary_dim && sa.base == sb.base &&
         sa.layout == sb.layout && sa.mrope_section == sb.mrope_section &&
         sa.mrope_interleaved == sb.mrope_interleaved && x.type == y.type && x.factor == y.factor &&
         x.original_max_positions == y.original_max_positions &&
         x.low_freq_factor == y.low_freq_factor && x.high_freq_factor == y.high_freq_factor &&
         x.beta_fast == y.beta_fast && x.beta_slow == y.beta_slow && x.truncate == y.truncate &&
         (x.attention_factor == y.attention_factor ||
          (std::isnan(x.attention_factor) && std::isnan(y.attention_factor))) &&
         x.mscale == y.mscale && x.mscale_all_dim == y.mscale_all_dim &&
         x.short_factor == y.short_factor && x.long_factor == y.long_factor &&
         a.softmax_scale_factor == b.softmax_scale_factor;
}

}  // namespace

const RotaryModelRule* rotary_model_rules() {
  return kRules;
}

std::size_t rotary_model_rule_count() {
  return kRuleCount;
}

const RotaryModelRule* find_rotary_model_rule(std::string_view model_type) {
  for (const RotaryModelRule& r : kRules)
    if (model_type == r.model_type) return &r;
  return nullptr;
}

EncodingError read_hf_config(const char* json, std::size_t size, const HfConfigRequest& request,
                             RotarySpec* spec, ModelLayer* layer) {
  JsonValue root;
  if (!detail::parse_json(json, size, &root) || root.type != JsonValue::Type::object)
    return invalid_json("config");
  Context c;
  c.cfg = &root;
  c.prefix = "config.";
  if (const JsonValue* text = member(root, "text_config")) {
    if (text->type != JsonValue::Type::object) return wrong_type("config.text_config", "an object");
    c.cfg = text;
    c.prefix = "config.text_config.";
  }
  // model_type: the text config's, else the top level's; none: Llama's rule (hand-written).
  const JsonValue* mt = member(*c.cfg, "model_type");
  std::string mt_name = c.prefix + "model_type";
  if (mt == nullptr) {
    mt = member(root, "model_type");
    mt_name = "config.model_type";
  }
  c.model_type = "llama";
  if (mt != nullptr) {
    if (mt->type != JsonValue::Type::string) return wrong_type(mt_name, "a string");
    // A nested text config without its own model_type is the top level's text model
    // ("gemma4" -> "gemma4_text") where the table has that row.
    c.rule = nullptr;
    if (c.cfg != &root && mt_name == "config.model_type")
      c.rule = find_rotary_model_rule(mt->string + "_text");
    if (c.rule == nullptr) c.rule = find_rotary_model_rule(mt->string);
    if (c.rule == nullptr && !request.llama_rule)
      return encoding_error(EncodingStatus::invalid_config, mt_name,
                            "'" + mt->string +
                                "' is not a model type posenc reads (pe.rotaryModelTypes lists "
                                "them); give modelRule: 'llama' to read it by Llama's rule");
    if (c.rule != nullptr) c.model_type = c.rule->model_type;
  }
  if (c.rule == nullptr) c.rule = &kRules[0];

  double n = 0;
  bool present = false;
  if (EncodingError e = read_number(*c.cfg, "num_hidden_layers", c.prefix, &n, &present); !e.ok())
    return e;
  if (present && !(n >= 1 && n <= 65536 && n == std::floor(n)))
    return wrong_type(c.prefix, "num_hidden_layers", "an integer from 1 to 65536");
  const std::int64_t num_layers = present ? static_cast<std::int64_t>(n) : 0;
  // HF's layer_type_validation: one layer type per layer.
  if (const JsonValue* lt = member(*c.cfg, "layer_types")) {
    if (lt->type != JsonValue::Type::array)
      return wrong_type(c.prefix + "layer_types", "an array of strings");
    if (num_layers > 0 && static_cast<std::int64_t>(lt->items.size()) != num_layers)
      return encoding_error(
          EncodingStatus::invalid_config, c.prefix + "layer_types",
          "must have one entry per layer (num_hidden_layers = " + integer_text(num_layers) +
              "), got " + integer_text(static_cast<std::int64_t>(lt->items.size())));
  }
  if (request.layer < -1 || (num_layers > 0 && request.layer >= num_layers))
    return bad_layer("must be an integer from 0 to " +
                     (num_layers > 0 ? integer_text(num_layers - 1) : std::string("2^31 - 1")) +
                     " (the config's num_hidden_layers), got " + integer_text(request.layer));

  // Whether the layers differ: every layer of a config that says how many it has, else layer 0.
  RotarySpec first_spec, here_spec;
  ModelLayer first, here;
  if (EncodingError e = read_layer(c, 0, &first_spec, &first); !e.ok()) return e;
  bool differ = false, types_differ = false;
  const bool per_layer = c.rule->rope != R::every || c.rule->layer_types != T::none ||
                         member(*c.cfg, "layer_types") != nullptr;
  if (per_layer) {
    for (std::int64_t i = 1; i < num_layers && !(differ && types_differ); ++i) {
      RotarySpec s;
      ModelLayer l;
      if (EncodingError e = read_layer(c, i, &s, &l); !e.ok()) return e;
      differ = differ || !same_rope(first, first_spec, l, s);
      types_differ = types_differ || l.layer_type != first.layer_type;
    }
  }
  if (request.layer < 0) {
    if (differ)
      return bad_layer(
          "must be given: the layers of this config differ in RoPE (theta, scaling, head dim or "
          "presence); give the decoder layer index, 0 to " +
          integer_text(num_layers - 1));
    here = std::move(first);
    here_spec = std::move(first_spec);
    here.layer = -1;
    if (types_differ) {
      // The layers share their RoPE but not their attention (Mistral-style windows on some
      // layers, gpt-oss): no one layer type or window describes them all.
      here.layer_type.clear();
      here.sliding_window = 0;
      here.attention_chunk = 0;
    }
  } else {
    if (EncodingError e = read_layer(c, request.layer, &here_spec, &here); !e.ok()) return e;
  }
  here.num_layers = num_layers;
  here.layers_differ = differ;
  if (here.has_rope) *spec = std::move(here_spec);
  *layer = std::move(here);
  return {};
}

EncodingError rotary_spec_from_hf_config(const char* json, std::size_t size, RotarySpec* out) {
  HfConfigRequest request;
  request.llama_rule = true;
  ModelLayer layer;
  RotarySpec spec;
  if (EncodingError e = read_hf_config(json, size, request, &spec, &layer); !e.ok()) return e;
  if (!layer.has_rope)
    return encoding_error(EncodingStatus::invalid_config, "config",
                          "describes a model without RoPE");
  *out = std::move(spec);
  return {};
}

}  // namespace posenc
