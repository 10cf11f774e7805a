#include "posenc/sinusoidal/presets.hpp"

namespace posenc {

namespace {

// exact: the paper's real frequencies (Spec::exact_frequencies); the framework presets keep the
// float64 frequencies posenc has always used for them.
constexpr Spec make_spec(Layout layout, Frequencies frequencies, OddDim odd, std::int64_t min_dim,
                         bool exact = false) {
  Spec s;
  s.layout = layout;
  s.frequencies = frequencies;
  s.odd = odd;
  s.min_dim = min_dim;
  s.exact_frequencies = exact;
  return s;
}

// The "half" frequency rule divides by (d/2 - 1): fairseq, Whisper and OpenNMT-tf divide by zero
// below d = 4, so those presets start at 4. tensor2tensor guards the division with max(n - 1, 1).
const PresetInfo kPresets[kPresetCount] = {
    {Preset::vaswani, "vaswani",
     "pytorch/tutorials beginner_source/transformer_tutorial.py (PositionalEncoding); "
     "keras-team/keras-hub keras_hub/src/layers/modeling/sine_position_encoding.py",
     make_spec(Layout::interleaved, Frequencies::paper, OddDim::paper, 1, true), 0.0, false},
    {Preset::tf_tutorial, "tf-tutorial",
     "tensorflow/text docs/tutorials/transformer.ipynb (positional_encoding)",
     make_spec(Layout::split, Frequencies::paper, OddDim::paper, 1), 0.0, false},
    {Preset::hf_marian, "hf-marian",
     "huggingface/transformers src/transformers/models/marian/modeling_marian.py "
     "(MarianSinusoidalPositionalEmbedding._init_weight)",
     make_spec(Layout::split, Frequencies::paper, OddDim::paper, 1), 0.0, false},
    {Preset::tensor2tensor, "tensor2tensor",
     "tensorflow/tensor2tensor tensor2tensor/layers/common_attention.py (get_timing_signal_1d)",
     make_spec(Layout::split, Frequencies::half, OddDim::zero_pad, 1), 0.0, false},
    {Preset::fairseq, "fairseq",
     "facebookresearch/fairseq fairseq/modules/sinusoidal_positional_embedding.py "
     "(get_embedding); fairseq/utils.py (make_positions)",
     make_spec(Layout::split, Frequencies::half, OddDim::zero_pad, 4), 0.0, true},
    {Preset::whisper, "whisper", "openai/whisper whisper/model.py (sinusoids)",
     make_spec(Layout::split, Frequencies::half, OddDim::reject, 4), 0.0, false},
    {Preset::opennmt_tf, "opennmt-tf",
     "OpenNMT/OpenNMT-tf opennmt/layers/position.py (SinusoidalPositionEncoder, PositionEncoder)",
     make_spec(Layout::split, Frequencies::half, OddDim::reject, 4), 1.0, false},
};

}  // namespace

const PresetInfo& preset_info(Preset p) {
  const int index = static_cast<int>(p);
  return kPresets[index >= 0 && index < kPresetCount ? index : 0];
}

bool preset_from_name(std::string_view name, Preset* out) {
  for (const PresetInfo& info : kPresets) {
    if (name == info.name) {
      *out = info.preset;
      return true;
    }
  }
  return false;
}

Spec preset_spec(Preset p, std::int64_t dim) {
  Spec s = preset_info(p).spec;
  s.dim = dim;
  return s;
}

double preset_first_position(Preset p, std::int64_t padding_idx) {
  const PresetInfo& info = preset_info(p);
  return info.uses_padding_idx ? static_cast<double>(padding_idx) + 1.0 : info.first_position;
}

}  // namespace posenc
