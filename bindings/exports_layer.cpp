// The encoder layer and the model (issue 5) as plain C exports: opaque handles over wasm-memory
// pointers, wrapped for JavaScript by bindings/js/handles.js. Argument checking and the copies in
// and out live in bindings/js/layer.js. Every call returns a posenc::LayerStatus code (0 = ok); the
// handle keeps the last error for posenc_*_error_message(). Pointers and sizes are wasm32 values.
#include <emscripten/emscripten.h>

#include <cstdint>
#include <new>
#include <string>

#include "posenc/nn/model.hpp"
#include "posenc/nn/transformer_layer.hpp"

namespace {

using posenc::LayerError;

// Keeps the last error of a handle and the text handed out for it.
struct LastError {
  int keep(LayerError e) {
    error = std::move(e);
    return static_cast<int>(error.status);
  }
  // "<name>: <message>"; valid until the next call on the same handle.
  const char* message() {
    text = error.message();
    return text.c_str();
  }
  LayerError error;
  std::string text;
};

}  // namespace

struct PosencLayer {
  LastError last;
  posenc::TransformerEncoderLayer layer;
};

struct PosencModel {
  LastError last;
  posenc::Model model;
};

extern "C" {

// ---- encoder layer -----------------------------------------------------------------------------

// A new, unconfigured layer, or null when memory is exhausted.
EMSCRIPTEN_KEEPALIVE PosencLayer* posenc_layer_create() {
  return new (std::nothrow) PosencLayer();
}

EMSCRIPTEN_KEEPALIVE void posenc_layer_destroy(PosencLayer* h) {
  delete h;
}

// activation: 0 relu, 1 gelu (posenc::Activation).
EMSCRIPTEN_KEEPALIVE int posenc_layer_configure(PosencLayer* h, int d_model, int heads, int ff_dim,
                                                int norm_first, int activation, double eps) {
  posenc::LayerConfig c;
  c.d_model = d_model;
  c.heads = heads;
  c.ff_dim = ff_dim;
  c.norm_first = norm_first != 0;
  c.activation = static_cast<posenc::Activation>(activation);
  c.layer_norm_eps = eps;
  return h->last.keep(h->layer.configure(c));
}

// name: the NUL-terminated state_dict name ("linear1.weight", ...); data: count floats (copied).
EMSCRIPTEN_KEEPALIVE int posenc_layer_set_tensor(PosencLayer* h, const char* name,
                                                 const float* data, std::size_t count) {
  return h->last.keep(h->layer.set_tensor(name, data, count));
}

// out (length x d_model) = layer(x (length x d_model)); mask: length bytes (nonzero hides that
// key) or null.
EMSCRIPTEN_KEEPALIVE int posenc_layer_forward(PosencLayer* h, const float* x, int length,
                                              int causal, const std::uint8_t* mask, float* out) {
  posenc::ForwardOptions o;
  o.causal = causal != 0;
  o.key_padding_mask = mask;
  const std::size_t n =
      static_cast<std::size_t>(length) * static_cast<std::size_t>(h->layer.config().d_model);
  return h->last.keep(h->layer.forward(x, n, length, o, out, n));
}

// The attention probabilities of the last forward (heads x L x L floats, L = attention_length),
// or null before any forward.
EMSCRIPTEN_KEEPALIVE const float* posenc_layer_attention(const PosencLayer* h) {
  return h->layer.attention();
}

EMSCRIPTEN_KEEPALIVE int posenc_layer_attention_length(const PosencLayer* h) {
  return static_cast<int>(h->layer.attention_length());
}

EMSCRIPTEN_KEEPALIVE const char* posenc_layer_error_message(PosencLayer* h) {
  return h->last.message();
}

// ---- model -------------------------------------------------------------------------------------

// A new, empty model, or null when memory is exhausted.
EMSCRIPTEN_KEEPALIVE PosencModel* posenc_model_create() {
  return new (std::nothrow) PosencModel();
}

EMSCRIPTEN_KEEPALIVE void posenc_model_destroy(PosencModel* h) {
  delete h;
}

// Loads a .safetensors file of size bytes (not kept).
EMSCRIPTEN_KEEPALIVE int posenc_model_load(PosencModel* h, const std::uint8_t* bytes,
                                           std::size_t size) {
  return h->last.keep(h->model.load(bytes, size));
}

// logits (length x num_classes) = model(tokens (length int32 ids)); mask as for the layer;
// use_pe 0 skips the positional encoding.
EMSCRIPTEN_KEEPALIVE int posenc_model_forward(PosencModel* h, const std::int32_t* tokens,
                                              int length, int causal, const std::uint8_t* mask,
                                              int use_pe, float* logits) {
  posenc::ModelForwardOptions o;
  o.causal = causal != 0;
  o.key_padding_mask = mask;
  o.positional_encoding = use_pe != 0;
  const std::size_t n =
      static_cast<std::size_t>(length) * static_cast<std::size_t>(h->model.config().num_classes);
  return h->last.keep(h->model.forward(tokens, length, o, logits, n));
}

// Layer `layer`'s attention probabilities of the last forward, or null.
EMSCRIPTEN_KEEPALIVE const float* posenc_model_attention(const PosencModel* h, int layer) {
  return h->model.attention(layer);
}

EMSCRIPTEN_KEEPALIVE int posenc_model_attention_length(const PosencModel* h) {
  return static_cast<int>(h->model.attention_length());
}

EMSCRIPTEN_KEEPALIVE const char* posenc_model_error_message(PosencModel* h) {
  return h->last.message();
}

// The loaded model's numbers, written to out[0..9]: vocab_size, num_classes, num_layers, d_model,
// heads, ff_dim, norm_first (0/1), activation (0 relu, 1 gelu), layer_norm_eps, embedding_scale.
// MODEL_FIELDS in bindings/js/handles.js names them in this order.
EMSCRIPTEN_KEEPALIVE void posenc_model_numbers(const PosencModel* h, double* out) {
  const posenc::ModelConfig& c = h->model.config();
  out[0] = static_cast<double>(c.vocab_size);
  out[1] = static_cast<double>(c.num_classes);
  out[2] = static_cast<double>(c.num_layers);
  out[3] = static_cast<double>(c.layer.d_model);
  out[4] = static_cast<double>(c.layer.heads);
  out[5] = static_cast<double>(c.layer.ff_dim);
  out[6] = c.layer.norm_first ? 1.0 : 0.0;
  out[7] = static_cast<double>(c.layer.activation);
  out[8] = c.layer.layer_norm_eps;
  out[9] = c.embedding_scale;
}

// The loaded model's strings (valid while the model is loaded): the positional encoding's preset
// name or "none", and the space-separated vocabulary and labels (may be empty).
EMSCRIPTEN_KEEPALIVE const char* posenc_model_positional_encoding(const PosencModel* h) {
  return h->model.config().positional_encoding.c_str();
}

EMSCRIPTEN_KEEPALIVE const char* posenc_model_vocab(const PosencModel* h) {
  return h->model.config().vocab.c_str();
}

EMSCRIPTEN_KEEPALIVE const char* posenc_model_labels(const PosencModel* h) {
  return h->model.config().labels.c_str();
}

}  // extern "C"
