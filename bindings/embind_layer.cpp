// Thin embind layer for the encoder layer and the model (issue 5): handles over wasm-memory
// pointers (passed as numbers). Argument checking and the copies in and out live in
// bindings/js/layer.js. Every call returns a posenc::LayerStatus code; the handle keeps the last
// error's name and message for the JS layer to put into its Error.
#include <emscripten/bind.h>

#include <cstdint>
#include <string>

#include "posenc/encoder_layer.hpp"
#include "posenc/model.hpp"

namespace {

using posenc::LayerError;

template <class T>
T* pointer(double address) {
  return reinterpret_cast<T*>(static_cast<std::uintptr_t>(address));
}

// Keeps the last error of a handle. (Each handle exposes error_name / error_message itself:
// embind does not bind member functions inherited from an unregistered base class.)
struct ErrorHolder {
  int keep(LayerError e) {
    error_ = std::move(e);
    return static_cast<int>(error_.status);
  }
  LayerError error_;
};

class LayerHandle {
 public:
  std::string error_name() const { return errors_.error_.name; }
  std::string error_message() const { return errors_.error_.message(); }
  int configure(int d_model, int heads, int ff_dim, bool norm_first, int activation, double eps) {
    posenc::LayerConfig c;
    c.d_model = d_model;
    c.heads = heads;
    c.ff_dim = ff_dim;
    c.norm_first = norm_first;
    c.activation = static_cast<posenc::Activation>(activation);
    c.layer_norm_eps = eps;
    return errors_.keep(layer_.configure(c));
  }
  int set_tensor(std::string name, double data, double count) {
    return errors_.keep(
        layer_.set_tensor(name, pointer<const float>(data), static_cast<std::size_t>(count)));
  }
  int check_complete() { return errors_.keep(layer_.check_complete()); }
  int forward(double x, double length, bool causal, double mask, double out) {
    posenc::ForwardOptions o;
    o.causal = causal;
    o.key_padding_mask = pointer<const std::uint8_t>(mask);
    const std::size_t n =
        static_cast<std::size_t>(length) * static_cast<std::size_t>(layer_.config().d_model);
    return errors_.keep(layer_.forward(
        pointer<const float>(x), n, static_cast<std::int64_t>(length), o, pointer<float>(out), n));
  }
  double attention_ptr() const {
    return static_cast<double>(reinterpret_cast<std::uintptr_t>(layer_.attention()));
  }
  double attention_length() const { return static_cast<double>(layer_.attention_length()); }

 private:
  ErrorHolder errors_;
  posenc::EncoderLayer layer_;
};

struct ModelInfo {
  int vocab_size, num_classes, num_layers, d_model, heads, ff_dim;
  bool norm_first;
  std::string activation;
  double layer_norm_eps, embedding_scale;
  std::string positional_encoding, vocab, labels;
};

class ModelHandle {
 public:
  std::string error_name() const { return errors_.error_.name; }
  std::string error_message() const { return errors_.error_.message(); }
  int load(double bytes, double size) {
    return errors_.keep(
        model_.load(pointer<const std::uint8_t>(bytes), static_cast<std::size_t>(size)));
  }
  int forward(double tokens, double length, bool causal, double mask, bool use_pe, double out) {
    posenc::ModelForwardOptions o;
    o.causal = causal;
    o.key_padding_mask = pointer<const std::uint8_t>(mask);
    o.positional_encoding = use_pe;
    const std::size_t n =
        static_cast<std::size_t>(length) * static_cast<std::size_t>(model_.config().num_classes);
    return errors_.keep(model_.forward(pointer<const std::int32_t>(tokens),
                                       static_cast<std::int64_t>(length), o, pointer<float>(out),
                                       n));
  }
  double attention_ptr(int layer) const {
    return static_cast<double>(reinterpret_cast<std::uintptr_t>(model_.attention(layer)));
  }
  double attention_length() const { return static_cast<double>(model_.attention_length()); }
  ModelInfo info() const {
    const posenc::ModelConfig& c = model_.config();
    return {static_cast<int>(c.vocab_size),
            static_cast<int>(c.num_classes),
            static_cast<int>(c.num_layers),
            static_cast<int>(c.layer.d_model),
            static_cast<int>(c.layer.heads),
            static_cast<int>(c.layer.ff_dim),
            c.layer.norm_first,
            c.layer.activation == posenc::Activation::gelu ? "gelu" : "relu",
            c.layer.layer_norm_eps,
            c.embedding_scale,
            c.positional_encoding,
            c.vocab,
            c.labels};
  }

 private:
  ErrorHolder errors_;
  posenc::Model model_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_layer) {
  using namespace emscripten;
  class_<LayerHandle>("LayerHandle")
      .constructor<>()
      .function("configure", &LayerHandle::configure)
      .function("setTensor", &LayerHandle::set_tensor)
      .function("checkComplete", &LayerHandle::check_complete)
      .function("forward", &LayerHandle::forward)
      .function("attentionPtr", &LayerHandle::attention_ptr)
      .function("attentionLength", &LayerHandle::attention_length)
      .function("errorName", &LayerHandle::error_name)
      .function("errorMessage", &LayerHandle::error_message);
  value_object<ModelInfo>("ModelInfo")
      .field("vocabSize", &ModelInfo::vocab_size)
      .field("numClasses", &ModelInfo::num_classes)
      .field("numLayers", &ModelInfo::num_layers)
      .field("dModel", &ModelInfo::d_model)
      .field("heads", &ModelInfo::heads)
      .field("ffDim", &ModelInfo::ff_dim)
      .field("normFirst", &ModelInfo::norm_first)
      .field("activation", &ModelInfo::activation)
      .field("layerNormEps", &ModelInfo::layer_norm_eps)
      .field("embeddingScale", &ModelInfo::embedding_scale)
      .field("positionalEncoding", &ModelInfo::positional_encoding)
      .field("vocab", &ModelInfo::vocab)
      .field("labels", &ModelInfo::labels);
  class_<ModelHandle>("ModelHandle")
      .constructor<>()
      .function("load", &ModelHandle::load)
      .function("forward", &ModelHandle::forward)
      .function("attentionPtr", &ModelHandle::attention_ptr)
      .function("attentionLength", &ModelHandle::attention_length)
      .function("info", &ModelHandle::info)
      .function("errorName", &ModelHandle::error_name)
      .function("errorMessage", &ModelHandle::error_message);
}
