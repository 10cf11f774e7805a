// posenc::TransformerEncoderLayer and posenc::Model for JavaScript: the classes
// `TransformerEncoderLayer` and `Model`. bindings/js/layer.js and model.js check arguments and copy
// data in and out through one-call buffers.
//
// Conventions (binding_values.hpp): pointers are addresses in wasm memory, every call that can
// fail returns 0 or a posenc::LayerStatus code, error() names what the last one was about (a
// tensor, a config field, "tokens[3]", "__metadata__.heads"...).
#include <emscripten/bind.h>

#include <cstdint>
#include <string>

#include "binding_values.hpp"
#include "posenc/nn/model.hpp"
#include "posenc/nn/transformer_layer.hpp"

namespace posenc_bindings {

// The config of a layer as JavaScript names it.
struct LayerConfigValue {
  int dModel = 0;
  int heads = 0;
  int ffDim = 0;
  bool normFirst = false;
  posenc::Activation activation = posenc::Activation::relu;
  double layerNormEps = 1e-5;
  // The position step (position_step.hpp), enums as their values: method none 0, rotary 1,
  // alibi 2; rotaryLayout half 0, interleaved 1; alibiMode causal 0, symmetric 1.
  int position = 0;
  double ropeTheta = 10000.0;
  int rotaryDim = 0;
  int rotaryLayout = 0;
  int alibiMode = 0;
};

// A loaded model's config, vocabulary and labels (space-separated, may be empty).
struct ModelInfo {
  double vocabSize = 0;
  int numClasses = 0;
  int numLayers = 0;
  LayerConfigValue layer;
  double embeddingScale = 0;
  std::string positionalEncoding;
  std::string vocab;
  std::string labels;
  // The length-extrapolation experiment's keys: '' or -1 when absent.
  std::string task;
  std::string symbols;
  double copyDistance = -1;
  double trainMaxLength = -1;
};

namespace {

LayerConfigValue layer_config_value(const posenc::LayerConfig& c) {
  return {static_cast<int>(c.d_model),
          static_cast<int>(c.heads),
          static_cast<int>(c.ff_dim),
          c.norm_first,
          c.activation,
          c.layer_norm_eps,
          static_cast<int>(c.position.method),
          c.position.rope_theta,
          static_cast<int>(c.position.rotary_dim),
          static_cast<int>(c.position.rotary_layout),
          static_cast<int>(c.position.alibi_mode)};
}

class Layer {
 public:
  // Sets the config and forgets every weight.
  int configure(const LayerConfigValue& v) {
    posenc::LayerConfig c;
    c.d_model = v.dModel;
    c.heads = v.heads;
    c.ff_dim = v.ffDim;
    c.norm_first = v.normFirst;
    c.activation = v.activation;
    c.layer_norm_eps = v.layerNormEps;
    // JS checks the enum values; out-of-range ones become an invalid config here.
    if (v.position < 0 || v.position > 2 || v.rotaryLayout < 0 || v.rotaryLayout > 1 ||
        v.alibiMode < 0 || v.alibiMode > 1) {
      return last_.keep(posenc::layer_error(posenc::LayerStatus::invalid_config, "position"));
    }
    c.position.method = static_cast<posenc::PositionMethod>(v.position);
    c.position.rope_theta = v.ropeTheta;
    c.position.rotary_dim = v.rotaryDim;
    c.position.rotary_layout = static_cast<posenc::RotaryLayout>(v.rotaryLayout);
    c.position.alibi_mode = static_cast<posenc::AlibiMode>(v.alibiMode);
    return last_.keep(layer_.configure(c));
  }

  // Copies count floats at data as the state_dict tensor `name`.
  int setTensor(const std::string& name, std::uintptr_t data, int count) {
    if (count < 0) return last_.keep(posenc::layer_error(posenc::LayerStatus::wrong_shape, name));
    return last_.keep(
        layer_.set_tensor(name, ptr<const float>(data), static_cast<std::size_t>(count)));
  }

  // out (length x dModel) = layer(x (length x dModel)); mask: length bytes or 0; row i at
  // positionOffset + i, or at positions[i] (length doubles) when positions is not 0.
  int forward(std::uintptr_t x, int length, bool causal, std::uintptr_t mask,
              double position_offset, std::uintptr_t positions, std::uintptr_t out) {
    posenc::ForwardOptions o;
    o.causal = causal;
    o.key_padding_mask = ptr<const std::uint8_t>(mask);
    o.position_offset = position_offset;
    o.positions = ptr<const double>(positions);
    o.pool = thread_pool();
    const std::size_t n = static_cast<std::size_t>(length < 0 ? 0 : length) *
                          static_cast<std::size_t>(layer_.config().d_model);
    return last_.keep(layer_.forward(ptr<const float>(x), n, length, o, ptr<float>(out), n));
  }

  // The address of the last forward's attention probabilities (heads x L x L floats), or 0.
  std::uintptr_t attention() const { return reinterpret_cast<std::uintptr_t>(layer_.attention()); }
  int attentionLength() const { return static_cast<int>(layer_.attention_length()); }
  ErrorInfo error() const { return last_.info(); }

 private:
  posenc::TransformerEncoderLayer layer_;
  LastError last_;
};

class Model {
 public:
  // Loads the .safetensors file of size bytes at `bytes` (not kept).
  int load(std::uintptr_t bytes, int size) {
    if (size < 0) return last_.keep(posenc::layer_error(posenc::LayerStatus::malformed_file, ""));
    return last_.keep(model_.load(ptr<const std::uint8_t>(bytes), static_cast<std::size_t>(size)));
  }

  // logits (length x numClasses) for length int32 token ids; mask: length bytes or 0.
  int forward(std::uintptr_t tokens, int length, bool causal, std::uintptr_t mask,
              bool positional_encoding, double position_offset, std::uintptr_t logits) {
    posenc::ModelForwardOptions o;
    o.position_offset = position_offset;
    o.causal = causal;
    o.key_padding_mask = ptr<const std::uint8_t>(mask);
    o.positional_encoding = positional_encoding;
    o.pool = thread_pool();
    const std::size_t n = static_cast<std::size_t>(length < 0 ? 0 : length) *
                          static_cast<std::size_t>(model_.config().num_classes);
    return last_.keep(
        model_.forward(ptr<const std::int32_t>(tokens), length, o, ptr<float>(logits), n));
  }

  // Layer `layer`'s attention probabilities of the last forward (an address), or 0.
  std::uintptr_t attention(int layer) const {
    return reinterpret_cast<std::uintptr_t>(model_.attention(layer));
  }
  int attentionLength() const { return static_cast<int>(model_.attention_length()); }

  ModelInfo info() const {
    const posenc::ModelConfig& c = model_.config();
    ModelInfo m;
    m.vocabSize = static_cast<double>(c.vocab_size);
    m.numClasses = static_cast<int>(c.num_classes);
    m.numLayers = static_cast<int>(c.num_layers);
    m.layer = layer_config_value(c.layer);
    m.embeddingScale = c.embedding_scale;
    m.positionalEncoding = c.positional_encoding;
    m.vocab = c.vocab;
    m.labels = c.labels;
    m.task = c.task;
    m.symbols = c.symbols;
    m.copyDistance = static_cast<double>(c.copy_distance);
    m.trainMaxLength = static_cast<double>(c.train_max_length);
    return m;
  }
  ErrorInfo error() const { return last_.info(); }

 private:
  posenc::Model model_;
  LastError last_;
};

// The shape of layer tensor `index` for a config (what layer.js checks weights against).
struct LayerTensorValue {
  std::string name;
  int ndim = 0;
  double rows = 0;
  double cols = 0;
  std::string dimNames;
};

LayerTensorValue layer_tensor(int index, int d_model, int ff_dim) {
  if (index < 0 || index >= posenc::kLayerTensorCount) return {};
  posenc::LayerConfig c;
  c.d_model = d_model;
  c.ff_dim = ff_dim;
  const posenc::LayerTensorShape s = posenc::layer_tensor_shape(c, index);
  return {posenc::kLayerTensorNames[index], s.ndim, static_cast<double>(s.dims[0]),
          static_cast<double>(s.dims[1]), s.dim_names};
}

}  // namespace
}  // namespace posenc_bindings

EMSCRIPTEN_BINDINGS(posenc_nn) {
  using namespace emscripten;
  using namespace posenc_bindings;

  constant("MAX_MODEL_DIM", static_cast<double>(posenc::kMaxModelDim));
  constant("MAX_HEADS", static_cast<double>(posenc::kMaxHeads));
  constant("MAX_FF_DIM", static_cast<double>(posenc::kMaxFfDim));
  constant("MAX_SEQUENCE_LENGTH", static_cast<double>(posenc::kMaxSequenceLength));
  constant("LAYER_TENSOR_COUNT", posenc::kLayerTensorCount);

  enum_<posenc::Activation>("Activation")
      .value("relu", posenc::Activation::relu)
      .value("gelu", posenc::Activation::gelu);

  value_object<LayerConfigValue>("LayerConfig")
      .field("dModel", &LayerConfigValue::dModel)
      .field("heads", &LayerConfigValue::heads)
      .field("ffDim", &LayerConfigValue::ffDim)
      .field("normFirst", &LayerConfigValue::normFirst)
      .field("activation", &LayerConfigValue::activation)
      .field("layerNormEps", &LayerConfigValue::layerNormEps)
      .field("position", &LayerConfigValue::position)
      .field("ropeTheta", &LayerConfigValue::ropeTheta)
      .field("rotaryDim", &LayerConfigValue::rotaryDim)
      .field("rotaryLayout", &LayerConfigValue::rotaryLayout)
      .field("alibiMode", &LayerConfigValue::alibiMode);

  value_object<ModelInfo>("ModelInfo")
      .field("vocabSize", &ModelInfo::vocabSize)
      .field("numClasses", &ModelInfo::numClasses)
      .field("numLayers", &ModelInfo::numLayers)
      .field("layer", &ModelInfo::layer)
      .field("embeddingScale", &ModelInfo::embeddingScale)
      .field("positionalEncoding", &ModelInfo::positionalEncoding)
      .field("vocab", &ModelInfo::vocab)
      .field("labels", &ModelInfo::labels)
      .field("task", &ModelInfo::task)
      .field("symbols", &ModelInfo::symbols)
      .field("copyDistance", &ModelInfo::copyDistance)
      .field("trainMaxLength", &ModelInfo::trainMaxLength);

  value_object<LayerTensorValue>("LayerTensor")
      .field("name", &LayerTensorValue::name)
      .field("ndim", &LayerTensorValue::ndim)
      .field("rows", &LayerTensorValue::rows)
      .field("cols", &LayerTensorValue::cols)
      .field("dimNames", &LayerTensorValue::dimNames);
  function("layerTensor", &layer_tensor);

  class_<Layer>("TransformerEncoderLayer")
      .constructor<>()
      .function("configure", &Layer::configure)
      .function("setTensor", &Layer::setTensor)
      .function("forward", &Layer::forward)
      .function("attention", &Layer::attention)
      .function("attentionLength", &Layer::attentionLength)
      .function("error", &Layer::error);

  class_<Model>("Model")
      .constructor<>()
      .function("load", &Model::load)
      .function("forward", &Model::forward)
      .function("attention", &Model::attention)
      .function("attentionLength", &Model::attentionLength)
      .function("info", &Model::info)
      .function("error", &Model::error);
}
