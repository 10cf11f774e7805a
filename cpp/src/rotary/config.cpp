// Reading a Hugging Face config.json (or only its rope_scaling object) into a RotarySpec: the
// keys and fallbacks of transformers' configuration classes (LlamaConfig, GPTNeoXConfig,
// GPTJConfig, Phi3Config, ...) and of modeling_rope_utils.py, resolved here once so that the JS
// API and the model loader share one place for the rules.
#include <cmath>
#include <string>

#include "rotary/config_keys.hpp"

namespace posenc {

using detail::JsonValue;

namespace rotary_config {

// A key of an object, or null when it is absent or JSON null (HF's getattr(..., None) / `or`).
const JsonValue* member(const JsonValue& obj, const char* key) {
  const JsonValue* v = obj.find(key);
  return v == nullptr || v->type == JsonValue::Type::null ? nullptr : v;
}

EncodingError wrong_type(const std::string& name, const char* what) {
  return encoding_error(EncodingStatus::invalid_config, name, std::string("must be ") + what);
}

EncodingError wrong_type(const std::string& prefix, const char* key, const char* what) {
  return wrong_type(prefix + key, what);
}

EncodingError wrong_entry(const std::string& prefix, const char* key, std::int64_t i,
                          const char* what) {
  return wrong_type(prefix + key + "[" + integer_text(i) + "]", what);
}

// Reads an optional number: *present false when absent or null.
EncodingError read_number(const JsonValue& obj, const char* key, const std::string& prefix,
                          double* out, bool* present) {
  const JsonValue* v = member(obj, key);
  *present = v != nullptr;
  if (v == nullptr) return {};
  if (v->type != JsonValue::Type::number || !std::isfinite(v->number))
    return wrong_type(prefix, key, "a finite number");
  *out = v->number;
  return {};
}

// Reads an optional positive integer (a JSON number with an integral value, 1..2^31 - 1).
EncodingError read_count(const JsonValue& obj, const char* key, const std::string& prefix,
                         std::int64_t* out, bool* present) {
  double v = 0;
  if (EncodingError e = read_number(obj, key, prefix, &v, present); !e.ok()) return e;
  if (!*present) return {};
  if (v != std::floor(v) || v < 1 || v > 2147483647.0)
    return encoding_error(EncodingStatus::invalid_argument, prefix + key,
                          "must be an integer from 1 to 2^31 - 1, got " + format_number(v));
  *out = static_cast<std::int64_t>(v);
  return {};
}

EncodingError read_numbers(const JsonValue& obj, const char* key, const std::string& prefix,
                           std::vector<double>* out, bool* present) {
  const JsonValue* v = member(obj, key);
  *present = v != nullptr;
  if (v == nullptr) return {};
  if (v->type != JsonValue::Type::array) return wrong_type(prefix, key, "an array of numbers");
  out->clear();
  for (std::size_t i = 0; i < v->items.size(); ++i) {
    const JsonValue& item = v->items[i];
    if (item.type != JsonValue::Type::number || !std::isfinite(item.number))
      return wrong_entry(prefix, key, static_cast<std::int64_t>(i), "a finite number");
    out->push_back(item.number);
  }
  return {};
}

// The key prefix + key is required by rope_type `rule`.
EncodingError missing(const std::string& prefix, const char* key, const char* rule) {
  return encoding_error(EncodingStatus::invalid_config, prefix + key,
                        std::string("is required by rope_type '") + rule + "'");
}

// The rope_scaling object. mpe: max_position_embeddings (0 when unknown; named mpe_prefix +
// "max_position_embeddings"); top_l0: the top-level original_max_position_embeddings (Phi-3; 0
// when absent).
EncodingError read_scaling(const JsonValue& rs, const std::string& prefix, double mpe,
                           double top_l0, const std::string& mpe_prefix, bool type_optional,
                           bool mrope_allowed, RopeScaling* out) {
  if (rs.type != JsonValue::Type::object)
    return wrong_type(prefix.substr(0, prefix.size() - 1), "an object or null");
  RopeScaling s;
  const JsonValue* type = member(rs, "rope_type");
  std::string type_key = "rope_type";
  if (type == nullptr) {
    type = member(rs, "type");  // HF: "rope_type" was originally "type"
    type_key = "type";
  }
  if (type == nullptr && !type_optional) return missing(prefix, "rope_type", "any");
  // Qwen2-VL's 'mrope' is the default rule on three position rows (its sections are read by the
  // model's row).
  const bool mrope = mrope_allowed && type != nullptr && type->type == JsonValue::Type::string &&
                     type->string == "mrope";
  // 'proportional' (Gemma 4): the default chain over the whole head (its zero tail is set by the
  // caller), divided by factor when one is given, as linear.
  const bool proportional =
      type != nullptr && type->type == JsonValue::Type::string && type->string == "proportional";
  if (proportional)
    s.type = member(rs, "factor") != nullptr ? RopeScalingType::linear : RopeScalingType::none;
  if (type != nullptr && !mrope && !proportional &&
      (type->type != JsonValue::Type::string || !rope_scaling_from_name(type->string, &s.type)))
    return encoding_error(EncodingStatus::invalid_argument, prefix + type_key,
                          "must be 'default', 'linear', 'dynamic', 'yarn', 'llama3' or 'longrope'");
  const char* rule = rope_scaling_name(s.type);
  bool has_factor = false, has_l0 = false, present = false;
  double l0 = 0;
  if (EncodingError e = read_number(rs, "factor", prefix, &s.factor, &has_factor); !e.ok())
    return e;
  if (EncodingError e = read_number(rs, "original_max_position_embeddings", prefix, &l0, &has_l0);
      !e.ok())
    return e;
  if (EncodingError e = read_number(rs, "attention_factor", prefix, &s.attention_factor, &present);
      !e.ok())
    return e;
  switch (s.type) {
    case RopeScalingType::none:
      s.factor = 1.0;
      break;
    case RopeScalingType::linear:
      if (!has_factor) return missing(prefix, "factor", rule);
      break;
    case RopeScalingType::dynamic:
      // _compute_dynamic_ntk_parameters uses config.max_position_embeddings.
      if (!has_factor) return missing(prefix, "factor", rule);
      if (mpe <= 0) return missing(mpe_prefix, "max_position_embeddings", rule);
      s.original_max_positions = mpe;
      break;
    case RopeScalingType::yarn: {
      // standardize_rope_params: a top-level original_max_position_embeddings wins.
      if (top_l0 > 0) {
        l0 = top_l0;
        has_l0 = true;
      }
      s.original_max_positions = has_l0 ? l0 : mpe;
      if (!has_l0 && mpe <= 0) return missing(mpe_prefix, "max_position_embeddings", rule);
      if (!has_factor) {
        // transformers main: factor defaults to max_position_embeddings / original.
        if (!has_l0 || mpe <= 0) return missing(prefix, "factor", rule);
        s.factor = mpe / l0;
      }
      double v = 0;
      if (EncodingError e = read_number(rs, "beta_fast", prefix, &v, &present); !e.ok()) return e;
      if (present && v != 0) s.beta_fast = v;  // HF: `get("beta_fast") or 32`
      if (EncodingError e = read_number(rs, "beta_slow", prefix, &v, &present); !e.ok()) return e;
      if (present && v != 0) s.beta_slow = v;  // HF: `get("beta_slow") or 1`
      if (EncodingError e = read_number(rs, "mscale", prefix, &s.mscale, &present); !e.ok())
        return e;
      if (EncodingError e = read_number(rs, "mscale_all_dim", prefix, &s.mscale_all_dim, &present);
          !e.ok())
        return e;
      if (const JsonValue* t = member(rs, "truncate")) {
        if (t->type != JsonValue::Type::boolean) return wrong_type(prefix, "truncate", "a boolean");
        s.truncate = t->boolean;
      }
      break;
    }
    case RopeScalingType::llama3: {
      if (!has_factor) return missing(prefix, "factor", rule);
      if (top_l0 > 0) {
        l0 = top_l0;  // standardize_rope_params: the top-level key wins
        has_l0 = true;
      }
      if (!has_l0) return missing(prefix, "original_max_position_embeddings", rule);
      s.original_max_positions = l0;
      if (EncodingError e =
              read_number(rs, "low_freq_factor", prefix, &s.low_freq_factor, &present);
          !e.ok())
        return e;
      if (!present) return missing(prefix, "low_freq_factor", rule);
      if (EncodingError e =
              read_number(rs, "high_freq_factor", prefix, &s.high_freq_factor, &present);
          !e.ok())
        return e;
      if (!present) return missing(prefix, "high_freq_factor", rule);
      break;
    }
    case RopeScalingType::longrope: {
      if (EncodingError e = read_numbers(rs, "short_factor", prefix, &s.short_factor, &present);
          !e.ok())
        return e;
      if (!present) return missing(prefix, "short_factor", rule);
      if (EncodingError e = read_numbers(rs, "long_factor", prefix, &s.long_factor, &present);
          !e.ok())
        return e;
      if (!present) return missing(prefix, "long_factor", rule);
      // L0: the top-level original_max_position_embeddings (Phi-3 keeps it there), else
      // rope_scaling's, else max_position_embeddings. factor: rope_scaling's, else
      // max_position_embeddings / L0 (Phi-3: 131072 / 4096 = 32).
      if (top_l0 > 0) {
        l0 = top_l0;
        has_l0 = true;
      }
      s.original_max_positions = has_l0 ? l0 : mpe;
      if (s.original_max_positions <= 0)
        return missing(mpe_prefix, "max_position_embeddings", rule);
      if (!has_factor) s.factor = mpe > 0 ? mpe / s.original_max_positions : 1.0;
      break;
    }
  }
  *out = std::move(s);
  return {};
}

EncodingError invalid_json(const char* name) {
  return encoding_error(EncodingStatus::invalid_config, name,
                        "must be JSON text of an object (a model's config.json), nested at most " +
                            integer_text(detail::kMaxDepth) + " deep with at most " +
                            integer_text(static_cast<std::int64_t>(detail::kMaxValues)) +
                            " values");
}

}  // namespace rotary_config

using namespace rotary_config;

EncodingError rope_scaling_from_json(const char* json, std::size_t size,
                                     double max_position_embeddings, RopeScaling* scaling) {
  JsonValue root;
  if (!detail::parse_json(json, size, &root) || root.type != JsonValue::Type::object)
    return invalid_json("rope_scaling");
  return read_scaling(root, "rope_scaling.", max_position_embeddings, 0, "", false, false, scaling);
}

namespace rotary_config {

EncodingError read_rope(const JsonValue& root, const RopeRead& how, RotarySpec* out) {
  const std::string& p = how.prefix;
  RotarySpec spec;
  spec.arithmetic = FrequencyArithmetic::hf_float32;
  spec.layout = how.layout;
  const JsonValue* rs = how.block;
  const bool rs_object = rs != nullptr && rs->type == JsonValue::Type::object;
  // The rope block's keys are named rs_prefix + key. The name of a key whose value may still be
  // refused is kept as (prefix, key) and spelt out only in the error.
  const std::string rs_prefix = rs != nullptr ? p + how.block_name + "." : std::string();
  bool present = false;

  // base: the layer's own key (Gemma 3's rope_local_base_freq), or rope_theta (LlamaConfig and
  // most), rotary_emb_base (GPTNeoXConfig), the rope block's rope_theta (transformers 5
  // rope_parameters), else 10000.
  const std::string* base_prefix = &p;
  const char* base_key = how.base_key;
  if (how.base_key != nullptr) {
    if (EncodingError e = read_number(root, how.base_key, p, &spec.base, &present); !e.ok())
      return e;
    if (!present) spec.base = how.base_default;
    present = true;
  }
  if (!present && rs_object && how.block_theta_first) {
    base_prefix = &rs_prefix;
    base_key = "rope_theta";
    if (EncodingError e = read_number(*rs, base_key, rs_prefix, &spec.base, &present); !e.ok())
      return e;
  }
  if (!present) {
    base_prefix = &p;
    base_key = "rope_theta";
    if (EncodingError e = read_number(root, base_key, p, &spec.base, &present); !e.ok()) return e;
  }
  if (!present) {
    base_key = "rotary_emb_base";
    if (EncodingError e = read_number(root, base_key, p, &spec.base, &present); !e.ok()) return e;
  }
  if (!present && rs_object) {
    base_prefix = &rs_prefix;
    base_key = "rope_theta";
    if (EncodingError e = read_number(*rs, base_key, rs_prefix, &spec.base, &present); !e.ok())
      return e;
  }
  if (!present) spec.base = how.theta_default;
  if (!(spec.base > 1.0))
    return encoding_error(EncodingStatus::invalid_argument, *base_prefix + base_key,
                          "must be a finite number > 1, got " + format_number(spec.base));

  // head_dim: the rule's key (head_dim; qk_rope_head_dim; global_head_dim), else
  // hidden_size // num_attention_heads (getattr(config, "head_dim", None) or ...).
  if (EncodingError e = read_count(root, how.head_key, p, &spec.head_dim, &present); !e.ok())
    return e;
  if (!present && how.head_default > 0) {
    spec.head_dim = how.head_default;
    present = true;
  }
  if (!present && how.head_key_required)
    return encoding_error(EncodingStatus::invalid_config, p + how.head_key,
                          std::string("is required by model_type '") + how.model_type + "'");
  const char* hidden_key = nullptr;  // set when the head dim is hidden_key / heads_key
  const char* heads_key = nullptr;
  if (!present) {
    std::int64_t hidden = 0, heads = 0;
    bool has_hidden = false, has_heads = false;
    hidden_key = member(root, "hidden_size") != nullptr ? "hidden_size" : "n_embd";
    heads_key = member(root, "num_attention_heads") != nullptr ? "num_attention_heads" : "n_head";
    if (EncodingError e = read_count(root, hidden_key, p, &hidden, &has_hidden); !e.ok()) return e;
    if (EncodingError e = read_count(root, heads_key, p, &heads, &has_heads); !e.ok()) return e;
    if (!has_hidden || !has_heads)
      return encoding_error(EncodingStatus::invalid_config, p + "head_dim",
                            "or " + p + "hidden_size and " + p +
                                "num_attention_heads (n_embd and n_head) must be given");
    spec.head_dim = hidden / heads;
  }
  const auto head_name = [&] {
    return hidden_key != nullptr ? p + hidden_key + " / " + p + heads_key : p + how.head_key;
  };
  if (spec.head_dim < 2 || spec.head_dim > kMaxRotaryHeadDim)
    return encoding_error(
        EncodingStatus::invalid_argument, head_name(),
        "must give a head dim from 2 to 65536, got " + integer_text(spec.head_dim));

  // rotary dim: rotary_dim (GPT-J, CodeGen: absolute), else int(head_dim * factor) with
  // partial_rotary_factor (the rope block's first in transformers 5) or rotary_pct (GPT-NeoX),
  // else the configuration class's default.
  // Gemma 4's 'proportional' rule turns the whole head with only the first
  // int(partial_rotary_factor * head_dim // 2) frequencies nonzero
  // (modeling_rope_utils.py _compute_proportional_rope_parameters).
  bool proportional = false;
  if (rs_object && !how.unscaled) {
    const JsonValue* t = member(*rs, "rope_type");
    proportional =
        t != nullptr && t->type == JsonValue::Type::string && t->string == "proportional";
  }
  std::int64_t rotary_dim = 0;
  if (EncodingError e = read_count(root, "rotary_dim", p, &rotary_dim, &present); !e.ok()) return e;
  // The key the rotary dim comes from (null: the head dim's).
  const std::string* rotary_prefix = &p;
  const char* rotary_key = "rotary_dim";
  bool whole_head = false;  // no rotary_dim or factor: all of the head rotates
  if (!present) {
    double partial = 1.0;
    if (how.partial_key != nullptr) {
      rotary_key = how.partial_key;
      if (EncodingError e = read_number(root, rotary_key, p, &partial, &present); !e.ok()) return e;
    } else if (rs_object) {
      rotary_prefix = &rs_prefix;
      rotary_key = "partial_rotary_factor";
      if (EncodingError e = read_number(*rs, rotary_key, rs_prefix, &partial, &present); !e.ok())
        return e;
    }
    if (!present && how.partial_key == nullptr) {
      rotary_prefix = &p;
      rotary_key = "partial_rotary_factor";
      if (EncodingError e = read_number(root, rotary_key, p, &partial, &present); !e.ok()) return e;
    }
    if (!present && how.partial_key == nullptr) {
      rotary_key = "rotary_pct";
      if (EncodingError e = read_number(root, rotary_key, p, &partial, &present); !e.ok()) return e;
    }
    if (!present) {
      partial = how.partial_default;
      whole_head = partial == 1.0;
      rotary_key = nullptr;
    }
    if (!(partial > 0) || partial > 1)
      return encoding_error(EncodingStatus::invalid_argument,
                            rotary_key != nullptr ? *rotary_prefix + rotary_key : head_name(),
                            "must be a number in (0, 1], got " + format_number(partial));
    rotary_dim = static_cast<std::int64_t>(static_cast<double>(spec.head_dim) * partial);
    if (proportional) {
      spec.rope_angles =
          static_cast<std::int64_t>(std::floor(partial * static_cast<double>(spec.head_dim) / 2.0));
      if (spec.rope_angles < 1)
        return encoding_error(EncodingStatus::invalid_argument,
                              rotary_key != nullptr ? *rotary_prefix + rotary_key : head_name(),
                              "must leave at least one frequency of the proportional rule, got " +
                                  format_number(partial));
      rotary_dim = spec.head_dim;
      whole_head = spec.head_dim % 2 == 0;
    }
  }
  if (whole_head && rotary_dim % 2 != 0)
    return encoding_error(
        EncodingStatus::invalid_argument, head_name(),
        "must give an even head dim (all of it rotates), got " + integer_text(spec.head_dim));
  if (rotary_dim < 2 || rotary_dim > spec.head_dim || rotary_dim % 2 != 0)
    return encoding_error(EncodingStatus::invalid_argument,
                          rotary_key != nullptr ? *rotary_prefix + rotary_key : head_name(),
                          "must give an even rotary dim from 2 to the head dim " +
                              integer_text(spec.head_dim) + ", got " + integer_text(rotary_dim));
  spec.rotary_dim = rotary_dim;

  // max_position_embeddings (n_positions: GPT-J) and Phi-3's top-level original.
  double mpe = 0, top_l0 = 0;
  if (EncodingError e = read_number(root, "max_position_embeddings", p, &mpe, &present); !e.ok())
    return e;
  if (!present) {
    if (EncodingError e = read_number(root, "n_positions", p, &mpe, &present); !e.ok()) return e;
  }
  if (EncodingError e = read_number(root, "original_max_position_embeddings", p, &top_l0, &present);
      !e.ok())
    return e;
  if (present && !(top_l0 >= 1))
    return encoding_error(EncodingStatus::invalid_argument, p + "original_max_position_embeddings",
                          "must be a number >= 1, got " + format_number(top_l0));
  if (rs != nullptr && !how.unscaled) {
    if (EncodingError e = read_scaling(*rs, rs_prefix, mpe, top_l0, p, how.type_optional,
                                       how.mrope_allowed, &spec.scaling);
        !e.ok())
      return e;
  }
  if (EncodingError e = validate(spec, ArgumentNames::hf_config); !e.ok()) return e;
  *out = std::move(spec);
  return {};
}

}  // namespace rotary_config

}  // namespace posenc
