// posenc: named presets that reproduce other frameworks' sinusoidal tables exactly.
//
// Each preset fixes a Spec (layout, frequency rule, odd-dim policy, smallest dim) and the absolute
// position of the first row. The formulas are pinned from each framework's source; the file each
// mirrors is named in presets.cpp and in tests/fixtures/presets/<name>.json.
#pragma once

#include <cstdint>
#include <string_view>

#include "posenc/sinusoidal/spec.hpp"

namespace posenc {

enum class Preset : std::uint8_t {
  vaswani,        // the paper; PyTorch tutorial; keras-hub SinePositionEncoding
  tf_tutorial,    // TensorFlow's Transformer tutorial positional_encoding (split)
  hf_marian,      // Hugging Face MarianSinusoidalPositionalEmbedding (split)
  tensor2tensor,  // tensor2tensor get_timing_signal_1d
  fairseq,        // fairseq SinusoidalPositionalEmbedding (positions from padding_idx + 1)
  whisper,        // openai/whisper sinusoids()
  opennmt_tf,     // OpenNMT-tf SinusoidalPositionEncoder (1-based positions)
};

inline constexpr int kPresetCount = 7;

// The default padding index of the fairseq preset (fairseq dictionaries put <pad> at 1).
inline constexpr std::int64_t kFairseqDefaultPaddingIdx = 1;

struct PresetInfo {
  Preset preset;
  const char* name;       // the name used in JavaScript ("vaswani", "tf-tutorial", ...)
  const char* source;     // the framework file it reproduces
  Spec spec;              // dim is 0: fill it in
  double first_position;  // absolute position of row 0 with offset 0 (fairseq: see below)
  bool uses_padding_idx;  // true for fairseq: first position = padding_idx + 1
};

// Information about a preset (never null for a valid enum value).
const PresetInfo& preset_info(Preset p);

// Looks a preset up by its JavaScript name; returns false when there is no such preset.
bool preset_from_name(std::string_view name, Preset* out);

// The spec of a preset at the given dim (not validated: call validate()).
Spec preset_spec(Preset p, std::int64_t dim);

// Absolute position of row 0 for a preset; padding_idx is used only by fairseq.
double preset_first_position(Preset p, std::int64_t padding_idx);

}  // namespace posenc
