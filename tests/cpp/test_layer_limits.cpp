// The layer's workspace sizes near the limits of wasm32's 32-bit size_t.
#include <catch2/catch.hpp>
#include <vector>

#include "posenc/encoder_layer.hpp"
#include "test_layer_util.hpp"

using namespace posenc;

TEST_CASE("layer: a workspace whose heads x L^2 passes 2^32 floats is out of memory, not a wrap",
          "[layer]") {
  // heads * L * L = 64 * 8192^2 = 2^32: in 32 bits it wrapped to an empty buffer that the
  // attention then overran. Only meaningful where size_t has 32 bits (wasm32);
  // natively the request is simply very large and is not attempted here.
  if (sizeof(std::size_t) != 4) return;
  LayerConfig config;
  config.d_model = 64;
  config.heads = 64;
  config.ff_dim = 8;
  EncoderLayer layer;
  REQUIRE(layer.configure(config).ok());
  for (const auto& t : layer_test::layer_state(5, 64, 8))
    REQUIRE(layer.set_tensor(t.name, t.values.data(), t.values.size()).ok());
  const std::vector<float> x = layer_test::layer_input(5, 3, 64);
  std::vector<float> good(3 * 64), again(3 * 64);
  REQUIRE(layer.forward(x.data(), x.size(), 3, {}, good.data(), good.size()).ok());

  const std::int64_t length = kMaxSequenceLength;
  REQUIRE(64 * length * length >= (std::int64_t{1} << 32));
  std::vector<float> big(static_cast<std::size_t>(length) * 64, 0.5f), out(big.size());
  const LayerError e = layer.forward(big.data(), big.size(), length, {}, out.data(), out.size());
  CHECK(e.status == LayerStatus::out_of_memory);
  CHECK(e.name == "length");
  // The layer keeps its old workspace and still works.
  REQUIRE(layer.forward(x.data(), x.size(), 3, {}, again.data(), again.size()).ok());
  CHECK(again == good);
}
