// The GEMM kernel against its scalar reference, and TransformerEncoderLayer against PyTorch's own
// nn.TransformerEncoderLayer (fixtures from tests/fixtures/layer/gen_layer.py).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "posenc/nn/gemm.hpp"
#include "posenc/nn/transformer_layer.hpp"
#include "test_layer_util.hpp"

using namespace posenc;
using layer_test::max_abs_diff;

namespace {

const char* const kFixtures[] = {
    "tiny-post-relu",          "post-relu-d6-pad",  "post-gelu-d30-causal", "pre-gelu-d30-pad",
    "pre-relu-d64-causal-pad", "post-gelu-d64-odd", "pre-relu-d6-causal",   "small-post-relu",
};

TransformerEncoderLayer make_layer(const LayerConfig& config, std::int64_t seed) {
  TransformerEncoderLayer layer;
  REQUIRE(layer.configure(config).ok());
  for (const auto& t : layer_test::layer_state(seed, config.d_model, config.ff_dim)) {
    const LayerError e = layer.set_tensor(t.name, t.values.data(), t.values.size(), t.shape.data(),
                                          static_cast<int>(t.shape.size()));
    INFO(e.message());
    REQUIRE(e.ok());
  }
  REQUIRE(layer.ready());
  return layer;
}

}  // namespace

TEST_CASE("gemm: the SIMD kernel equals the scalar reference bit for bit", "[layer][gemm]") {
  for (std::int64_t m : {1, 2, 3, 4, 5, 7, 9}) {
    for (std::int64_t n : {1, 3, 8, 9, 17}) {
      for (std::int64_t k : {1, 2, 5, 16, 33}) {
        const std::int64_t lda = k + 3, ldc = n + 2;
        const auto a = layer_test::lcg_values(m * 1000 + n * 10 + k, m * lda, 1.0);
        const auto w = layer_test::lcg_values(k * 7 + n, n * k, 0.5);
        const auto bias = layer_test::lcg_values(n, n, 0.25);
        PackedMatrix packed;
        REQUIRE(packed.pack_transposed(w.data(), n, k, k));
        for (Epilogue e : {Epilogue::none, Epilogue::relu, Epilogue::gelu}) {
          std::vector<float> c1(m * ldc, 7.0f), c2(m * ldc, 7.0f);
          gemm(a.data(), lda, m, packed, bias.data(), e, c1.data(), ldc);
          gemm_scalar(a.data(), lda, m, packed, bias.data(), e, c2.data(), ldc);
          INFO("m " << m << " n " << n << " k " << k << " epilogue " << int(e));
          REQUIRE(c1 == c2);  // including the untouched stride gaps
          // Against a float64 product.
          double worst = 0.0;
          for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j) {
              double s = bias[j];
              for (std::int64_t kk = 0; kk < k; ++kk)
                s += double(a[i * lda + kk]) * w[j * k + kk];
              if (e == Epilogue::relu) s = s > 0 ? s : 0;
              if (e == Epilogue::gelu) s = 0.5 * s * (1 + std::erf(s / std::sqrt(2.0)));
              worst = std::max(worst, std::fabs(s - c1[i * ldc + j]));
            }
          REQUIRE(worst < 2e-6 * double(k + 1));
        }
        // The k x n packing of the same matrix gives the same product.
        std::vector<float> wt(k * n);
        for (std::int64_t kk = 0; kk < k; ++kk)
          for (std::int64_t j = 0; j < n; ++j)
            wt[kk * n + j] = w[j * k + kk];
        PackedMatrix packed2;
        REQUIRE(packed2.pack(wt.data(), k, n, n));
        std::vector<float> c1(m * ldc), c2(m * ldc);
        gemm(a.data(), lda, m, packed, nullptr, Epilogue::none, c1.data(), ldc);
        gemm(a.data(), lda, m, packed2, nullptr, Epilogue::none, c2.data(), ldc);
        REQUIRE(c1 == c2);
      }
    }
  }
}

TEST_CASE("layer: matches PyTorch nn.TransformerEncoderLayer within 4e-6", "[layer]") {
  for (const char* name : kFixtures) {
    const auto fx = layer_test::load_json(std::string("layer/") + name + ".json");
    INFO("fixture " << name);
    REQUIRE(fx.is_object());
    const LayerConfig config = layer_test::config_from_json(fx.at("config"));
    const std::int64_t seed = fx.at("seed").get<std::int64_t>();
    const std::int64_t length = fx.at("length").get<std::int64_t>();
    TransformerEncoderLayer layer = make_layer(config, seed);
    const auto x = layer_test::layer_input(seed, length, config.d_model);
    std::vector<std::uint8_t> mask;
    ForwardOptions options;
    options.causal = fx.at("causal").get<bool>();
    if (!fx.at("keyPaddingMask").is_null()) {
      mask = fx.at("keyPaddingMask").get<std::vector<std::uint8_t>>();
      options.key_padding_mask = mask.data();
    }
    std::vector<float> out(x.size());
    REQUIRE(layer.forward(x.data(), x.size(), length, options, out.data(), out.size()).ok());
    const auto expected = fx.at("expected").get<std::vector<double>>();
    REQUIRE(expected.size() == out.size());
    const double err = max_abs_diff(out, expected);
    double err64 = -1.0;
    if (!fx.at("expected64").is_null())
      err64 = max_abs_diff(out, fx.at("expected64").get<std::vector<double>>());
    double err_attn = -1.0;
    if (!fx.at("attention").is_null()) {
      const auto attn = fx.at("attention").get<std::vector<double>>();
      REQUIRE(layer.attention_length() == length);
      std::vector<float> probs(layer.attention(), layer.attention() + attn.size());
      err_attn = max_abs_diff(probs, attn);
      CHECK(err_attn <= 1e-6);
    }
    std::printf(
        "[layer] %-24s %s max|posenc - torch f32| %.2e  vs torch f64 %.2e  attention %.2e\n", name,
        gemm_uses_simd() ? "simd  " : "scalar", err, err64, err_attn);
    CHECK(err <= 4e-6);
    // In place (x and out the same buffer) gives the same result.
    std::vector<float> inplace = x;
    REQUIRE(layer
                .forward(inplace.data(), inplace.size(), length, options, inplace.data(),
                         inplace.size())
                .ok());
    CHECK(inplace == out);
  }
}

TEST_CASE("layer: bad input gives errors naming the argument, the layer keeps working", "[layer]") {
  LayerConfig config;
  config.d_model = 6;
  config.heads = 4;
  config.ff_dim = 10;
  TransformerEncoderLayer layer;
  LayerError e = layer.configure(config);
  CHECK(e.status == LayerStatus::invalid_config);
  CHECK(e.name == "heads");
  config.heads = 2;
  config.layer_norm_eps = NAN;
  CHECK(layer.configure(config).name == "layerNormEps");
  config.layer_norm_eps = 1e-5;
  config.d_model = 0;
  CHECK(layer.configure(config).name == "dModel");
  config.d_model = 6;
  REQUIRE(layer.configure(config).ok());

  auto state = layer_test::layer_state(3, 6, 10);
  std::vector<float> x = layer_test::layer_input(3, 5, 6), out(30);
  e = layer.forward(x.data(), x.size(), 5, {}, out.data(), out.size());
  CHECK(e.status == LayerStatus::not_ready);
  CHECK(e.name == "self_attn.in_proj_weight");

  for (const auto& t : state)
    REQUIRE(layer.set_tensor(t.name, t.values.data(), t.values.size()).ok());
  e = layer.set_tensor("linear3.weight", state[4].values.data(), state[4].values.size());
  CHECK(e.status == LayerStatus::unknown_tensor);
  CHECK(e.name == "linear3.weight");
  CHECK(e.message() == "linear3.weight: unknown tensor (not a weight of this layer or model)");
  e = layer.set_tensor("linear1.weight", state[4].values.data(), state[4].values.size() - 1);
  CHECK(e.status == LayerStatus::wrong_shape);
  CHECK(e.name == "linear1.weight");
  const std::int64_t transposed[] = {6, 10};
  e = layer.set_tensor("linear1.weight", state[4].values.data(), 60, transposed, 2);
  CHECK(e.status == LayerStatus::wrong_shape);

  REQUIRE(layer.forward(x.data(), x.size(), 5, {}, out.data(), out.size()).ok());
  const std::vector<float> good = out;
  CHECK(layer.forward(x.data(), x.size(), 0, {}, out.data(), out.size()).name == "length");
  CHECK(layer.forward(x.data(), x.size(), kMaxSequenceLength + 1, {}, out.data(), out.size())
            .status == LayerStatus::invalid_length);
  CHECK(layer.forward(x.data(), x.size() - 1, 5, {}, out.data(), out.size()).name == "x");
  CHECK(layer.forward(x.data(), x.size(), 5, {}, out.data(), 29).name == "out");
  CHECK(layer.forward(nullptr, x.size(), 5, {}, out.data(), out.size()).name == "x");
  // Still working, same result.
  std::vector<float> again(30);
  REQUIRE(layer.forward(x.data(), x.size(), 5, {}, again.data(), again.size()).ok());
  CHECK(again == good);

  // A query whose keys are all hidden gets zero probabilities (not NaN).
  const std::uint8_t all_hidden[] = {1, 1, 1, 1, 1};
  ForwardOptions options;
  options.key_padding_mask = all_hidden;
  REQUIRE(layer.forward(x.data(), x.size(), 5, options, again.data(), again.size()).ok());
  for (int i = 0; i < 2 * 5 * 5; ++i)
    CHECK(layer.attention()[i] == 0.0f);
  for (float v : again)
    CHECK(std::isfinite(v));
}
