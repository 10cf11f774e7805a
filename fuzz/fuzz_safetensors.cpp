// libFuzzer target: arbitrary bytes as a .safetensors file, through
//  1. the reader: parse, then convert every tensor to float32, checking the index it built
//     (offsets inside the data and tiling it, element counts matching the byte ranges);
//  2. the model loader: Model::load (a model that loads has only finite weights), then, when it
//     loads, a forward over a few tokens, a refused forward (a token out of range), and the same
//     forward again, which must give the same logits;
//  3. a lone TransformerEncoderLayer configured from the file's shapes and given its "layers.0."
//  tensors,
//     then, when it is complete, a forward over a few rows.
// Whatever the bytes, the core must return errors (never crash, read or write out of bounds,
// leak, or hit undefined behaviour), and errors must name what they are about. Work per input is
// bounded by the input's size: every tensor is read from it, and forwards run over at most 4
// tokens.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "posenc/io/safetensors.hpp"
#include "posenc/nn/model.hpp"
#include "posenc/nn/transformer_layer.hpp"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

// 1. The reader and its invariants.
void exercise_reader(const std::uint8_t* data, std::size_t size) {
  posenc::SafetensorsFile file;
  const posenc::LayerError e = file.parse(data, size);
  if (!e.ok()) {
    require(!e.name.empty());
    require(file.tensors().empty() && file.all_metadata().empty());
    return;
  }
  std::uint64_t header = 0;
  for (int i = 7; i >= 0; --i)
    header = (header << 8) | data[i];
  const std::size_t data_size = size - 8 - static_cast<std::size_t>(header);
  std::vector<float> values;
  std::size_t covered = 0;  // the ranges tile the data: their sizes add up to it
  for (const posenc::TensorInfo& t : file.tensors()) {
    covered += t.end - t.begin;
    require(t.begin <= t.end && t.end <= data_size);
    const std::size_t width = t.dtype == posenc::DType::f32 ? 4 : 2;
    require(t.end - t.begin == t.elements * width);
    std::size_t elements = 1;
    for (std::int64_t d : t.shape) {
      require(d >= 0);
      elements *= static_cast<std::size_t>(d);
    }
    require(elements == t.elements);
    require(file.find(t.name) != nullptr);
    values.assign(t.elements + 1, 7.0f);
    require(file.read_f32(t, values.data(), t.elements).ok());
    require(values[t.elements] == 7.0f);  // nothing written past the tensor
    // A wrong count is refused, not read.
    require(!file.read_f32(t, values.data(), t.elements + 1).ok());
  }
  require(covered == data_size);
  for (const auto& kv : file.all_metadata())
    require(file.metadata(kv.first) != nullptr);
}

// Every value of every tensor in the file is finite (what a model that loaded must guarantee).
bool all_finite(const std::uint8_t* data, std::size_t size) {
  posenc::SafetensorsFile file;
  require(file.parse(data, size).ok());
  std::vector<float> values;
  for (const posenc::TensorInfo& t : file.tensors()) {
    values.resize(t.elements + 1);
    require(file.read_f32(t, values.data(), t.elements).ok());
    for (std::size_t i = 0; i < t.elements; ++i)
      if (!std::isfinite(values[i])) return false;
  }
  return true;
}

// 2. The model: load, forward, a refused forward, and the same forward again.
void exercise_model(const std::uint8_t* data, std::size_t size) {
  posenc::Model model;
  const posenc::LayerError e = model.load(data, size);
  if (!e.ok()) {
    require(!e.name.empty() && !model.loaded());
    return;
  }
  const posenc::ModelConfig& c = model.config();
  require(c.vocab_size >= 1 && c.num_classes >= 1 && c.num_layers >= 1);
  require(all_finite(data, size));  // NaN and infinite weights are refused at load
  const std::int64_t length = 1 + static_cast<std::int64_t>(size % 4);
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(length));
  for (std::int64_t i = 0; i < length; ++i)
    tokens[static_cast<std::size_t>(i)] =
        static_cast<std::int32_t>(data[(static_cast<std::size_t>(i) * 131) % size] % c.vocab_size);
  const std::size_t n = static_cast<std::size_t>(length * c.num_classes);
  std::vector<float> first(n), again(n);
  posenc::ModelForwardOptions options;
  options.causal = (size & 4) != 0;
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(length));
  if (size & 8) {
    for (std::int64_t i = 0; i < length; ++i)
      mask[static_cast<std::size_t>(i)] = data[static_cast<std::size_t>(i) % size] & 1;
    options.key_padding_mask = mask.data();
  }
  options.positional_encoding = (size & 16) == 0;
  require(model.forward(tokens.data(), length, options, first.data(), n).ok());
  require(model.attention_length() == length);

  std::vector<std::int32_t> bad = tokens;
  bad.back() = static_cast<std::int32_t>(c.vocab_size);
  const posenc::LayerError refused = model.forward(bad.data(), length, options, again.data(), n);
  require(refused.status == posenc::LayerStatus::invalid_token);
  require(model.forward(tokens.data(), length, options, again.data(), n).ok());
  // Bitwise the same (NaN included: weights are finite, but large ones can still overflow).
  require(std::memcmp(first.data(), again.data(), n * sizeof(float)) == 0);
}

// 3. A lone encoder layer from the file's "layers.0." tensors, configured from their shapes.
void exercise_layer(const std::uint8_t* data, std::size_t size) {
  posenc::SafetensorsFile file;
  if (!file.parse(data, size).ok()) return;
  const posenc::TensorInfo* norm = file.find("layers.0.norm1.weight");
  const posenc::TensorInfo* linear = file.find("layers.0.linear1.weight");
  if (norm == nullptr || linear == nullptr || norm->shape.size() != 1 || linear->shape.empty())
    return;
  posenc::LayerConfig config;
  config.d_model = norm->shape[0];
  config.ff_dim = linear->shape[0];
  config.heads = 1 + static_cast<std::int64_t>(data[size - 1] % 4);
  config.norm_first = (data[size - 1] & 0x10) != 0;
  config.activation = (data[size - 1] & 0x20) ? posenc::Activation::gelu : posenc::Activation::relu;
  posenc::TransformerEncoderLayer layer;
  if (!layer.configure(config).ok()) return;
  std::vector<float> values;
  for (const char* name : posenc::kLayerTensorNames) {
    const posenc::TensorInfo* t = file.find(std::string("layers.0.") + name);
    if (t == nullptr) continue;
    values.resize(t->elements + 1);
    require(file.read_f32(*t, values.data(), t->elements).ok());
    const posenc::LayerError e = layer.set_tensor(name, values.data(), t->elements, t->shape.data(),
                                                  static_cast<int>(t->shape.size()));
    require(e.ok() || !e.name.empty());
  }
  if (!layer.ready()) {
    std::vector<float> x(static_cast<std::size_t>(config.d_model)), out(x.size());
    require(layer.forward(x.data(), x.size(), 1, {}, out.data(), out.size()).status ==
            posenc::LayerStatus::not_ready);
    return;
  }
  const std::int64_t length = 1 + static_cast<std::int64_t>(size % 3);
  const std::size_t n = static_cast<std::size_t>(length * config.d_model);
  std::vector<float> x(n), out(n);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = static_cast<float>(data[i % size]) / 64.0f - 2.0f;
  posenc::ForwardOptions options;
  options.causal = (size & 1) != 0;
  require(layer.forward(x.data(), n, length, options, out.data(), n).ok());
  require(layer.attention() != nullptr && layer.attention_length() == length);
  // Refused: a length the buffers do not match. The next forward still runs.
  require(layer.forward(x.data(), n, length + 1, options, out.data(), n).status ==
          posenc::LayerStatus::size_mismatch);
  require(layer.forward(x.data(), n, length, options, x.data(), n).ok());  // in place
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  exercise_reader(data, size);
  exercise_model(data, size);
  exercise_layer(data, size);
  return 0;
}
