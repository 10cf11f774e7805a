// posenc: a small token tagger around TransformerEncoderLayer, loaded from one .safetensors file.
//
//   h = embedding[tokens] * embedding_scale + PE(positions 0..L-1)   (PE: a posenc preset, or none)
//   h = layers[N-1]( ... layers[0](h))
//   logits = h head.weight^T + head.bias                               (L x num_classes)
//
// Tensors (PyTorch names): embedding.weight [vocab, d], layers.<i>.<TransformerEncoderLayer names>,
// head.weight [classes, d], head.bias [classes]; F32, F16 or BF16. The config is in
// __metadata__ (strings): heads, num_layers, positional_encoding (a preset name such as
// "vaswani", "rotary", "alibi" or "none"); optional norm_first ("true"/"false", default false),
// activation
// ("relu"/"gelu", default relu), layer_norm_eps (default 1e-5), embedding_scale (default sqrt(d),
// finite as a float32), vocab and labels (space-separated, for display). d, ff, vocab and class
// counts come from the tensor shapes. The PE is added by posenc::SinusoidalEncoder::add_to (float32
// within 2^-22 of exact).
//
// Rotary and ALiBi are not added to h: every layer's attention applies them (position_step.hpp),
// with these optional keys: rope_theta (default 10000, finite > 1), partial_rotary_factor
// (0 < f <= 1, default 1: int(head_dim * f) leading dims of each head rotate, which must be even
// and >= 2), rotary_layout ("half", default, or "interleaved"), rope_scaling (absent or "null";
// any other JSON value is refused as not supported yet), alibi_mode ("causal", default, or
// "symmetric"; every head count 1..256 has slopes). They are checked whenever present. Also kept
// for display: task, symbols (strings), copy_distance (0..8192), train_max_length (1..8192).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "posenc/buffer.hpp"
#include "posenc/nn/gemm.hpp"
#include "posenc/nn/layer_status.hpp"
#include "posenc/nn/transformer_layer.hpp"
#include "posenc/sinusoidal/encoder.hpp"

namespace posenc {

inline constexpr std::int64_t kMaxModelLayers = 64;

struct ModelConfig {
  std::int64_t vocab_size = 0;
  std::int64_t num_classes = 0;
  std::int64_t num_layers = 0;
  LayerConfig layer;
  std::string positional_encoding;  // preset name, or "none"
  double embedding_scale = 0.0;
  std::string vocab;   // metadata "vocab" (may be empty)
  std::string labels;  // metadata "labels" (may be empty)
  // The length-extrapolation experiment's keys (tests/fixtures/extrapolation): empty or -1 when
  // the file has none.
  std::string task;
  std::string symbols;
  std::int64_t copy_distance = -1;
  std::int64_t train_max_length = -1;
};

struct ModelForwardOptions {
  bool causal = false;
  const std::uint8_t* key_padding_mask = nullptr;  // L entries, nonzero hides that key
  // false: skip the positional encoding even though the model has one (to show what it does):
  // the table is not added, or the layers run without their rotary or ALiBi step.
  bool positional_encoding = true;
  // Row i is at position position_offset + i (>= 0, finite; the last row at most 2^31 - 1):
  // for rotary and ALiBi, and for the sinusoidal table (whose first row moves by it).
  double position_offset = 0.0;
  // With a pool: each layer's products and softmax rows are split between its threads (same bits).
  ThreadPool* pool = nullptr;
};

class Model {
 public:
  // Validates and loads a .safetensors file (see the header comment). Errors name what they are
  // about: the file part or tensor (SafetensorsFile::parse), "__metadata__.<key>", a missing,
  // unknown or wrongly shaped tensor, or the first NaN or infinite weight ("head.weight[1][3]":
  // every weight must be finite). On error the model keeps what it had before. The bytes are
  // not kept.
  LayerError load(const std::uint8_t* bytes, std::size_t size);

  bool loaded() const { return !layers_.empty(); }
  const ModelConfig& config() const { return config_; }

  // logits (L x num_classes) for token ids (L of them, each in [0, vocab_size)). Errors:
  // not_ready, invalid_length ("length"), invalid_token ("tokens[i]"), size_mismatch ("logits"),
  // invalid_position ("positionOffset").
  LayerError forward(const std::int32_t* tokens, std::int64_t length,
                     const ModelForwardOptions& options, float* logits, std::size_t logits_len);

  // The attention probabilities (heads x L x L) of layer i in the last successful forward, or
  // null (before any, or when a forward failed part way through the layers: then they disagree).
  const float* attention(std::int64_t layer) const;
  // L of those probabilities, or 0 when there are none.
  std::int64_t attention_length() const;

 private:
  ModelConfig config_;
  FloatBuffer embedding_;
  // null when positional_encoding is "none", "rotary" or "alibi"
  std::unique_ptr<SinusoidalEncoder> encoder_;
  double first_position_ = 0.0;
  double zero_position_ = -1.0;
  std::vector<TransformerEncoderLayer> layers_;
  PackedMatrix head_;
  FloatBuffer head_bias_;
  FloatBuffer hidden_;
};

}  // namespace posenc
