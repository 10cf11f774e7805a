// Helpers of the layer tests: the fixture reader and the LCG weight generator of
// tests/fixtures/layer/lcg.py (the same exact float32 values).
#pragma once

#include <cmath>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "posenc/nn/transformer_layer.hpp"

namespace layer_test {

inline nlohmann::json load_json(const std::string& relative) {
  std::ifstream in(std::string(POSENC_FIXTURE_DIR) + "/" + relative);
  if (!in.good()) return nlohmann::json();
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

inline std::vector<std::uint8_t> load_bytes(const std::string& relative) {
  std::ifstream in(std::string(POSENC_FIXTURE_DIR) + "/" + relative, std::ios::binary);
  return std::vector<std::uint8_t>((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
}

inline std::vector<float> lcg_values(std::int64_t seed, std::size_t count, double scale) {
  std::uint32_t state = static_cast<std::uint32_t>(
      (static_cast<std::uint64_t>(seed) * 2654435761u + 12345u) & 0xFFFFFFFFu);
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    state = state * 1664525u + 1013904223u;
    const double u = (static_cast<double>(state >> 8) - 8388608.0) / 8388608.0;
    out[i] = static_cast<float>(u * scale);
  }
  return out;
}

// lcg.py's 2 ** -round(log2(sqrt(fan_in))) with Python's round: halves to the even neighbour
// (nearbyint in the default rounding mode; std::round would take fan_in 512 to 2^-5, not 2^-4).
inline double pow2_scale(std::int64_t fan_in) {
  return std::exp2(-std::nearbyint(std::log2(std::sqrt(static_cast<double>(fan_in)))));
}

struct Tensor {
  std::string name;
  std::vector<std::int64_t> shape;
  std::vector<float> values;
};

// The twelve tensors of lcg.py's layer_state(seed, d, ff).
inline std::vector<Tensor> layer_state(std::int64_t seed, std::int64_t d, std::int64_t ff) {
  struct Row {
    std::vector<std::int64_t> shape;
    int kind;  // 0 weight, 1 bias, 2 norm weight
    std::int64_t fan_in;
  };
  const Row rows[12] = {{{3 * d, d}, 0, d}, {{3 * d}, 1, d}, {{d, d}, 0, d},   {{d}, 1, d},
                        {{ff, d}, 0, d},    {{ff}, 1, d},    {{d, ff}, 0, ff}, {{d}, 1, ff},
                        {{d}, 2, d},        {{d}, 1, d},     {{d}, 2, d},      {{d}, 1, d}};
  std::vector<Tensor> out;
  for (int i = 0; i < 12; ++i) {
    std::size_t count = 1;
    for (auto s : rows[i].shape)
      count *= static_cast<std::size_t>(s);
    const std::int64_t s = seed * 100 + i;
    std::vector<float> v = rows[i].kind == 0 ? lcg_values(s, count, pow2_scale(rows[i].fan_in))
                                             : lcg_values(s, count, 0.125);
    if (rows[i].kind == 2)
      for (float& x : v)
        x = 1.0f + x;
    out.push_back({posenc::kLayerTensorNames[i], rows[i].shape, std::move(v)});
  }
  return out;
}

inline std::vector<float> layer_input(std::int64_t seed, std::int64_t length, std::int64_t d) {
  return lcg_values(seed * 100 + 99, static_cast<std::size_t>(length * d), 1.0);
}

inline posenc::LayerConfig config_from_json(const nlohmann::json& c) {
  posenc::LayerConfig config;
  config.d_model = c.at("dModel").get<std::int64_t>();
  config.heads = c.at("heads").get<std::int64_t>();
  config.ff_dim = c.at("ffDim").get<std::int64_t>();
  config.norm_first = c.at("normFirst").get<bool>();
  config.activation = c.at("activation").get<std::string>() == "gelu" ? posenc::Activation::gelu
                                                                      : posenc::Activation::relu;
  config.layer_norm_eps = c.at("layerNormEps").get<double>();
  return config;
}

template <class A, class B>
double max_abs_diff(const A& a, const B& b) {
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
    if (!(d <= m)) m = d;  // NaN propagates as a failure
  }
  return m;
}

}  // namespace layer_test
