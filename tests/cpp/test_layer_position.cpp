// The position step of the encoder layer's attention (rotary, ALiBi): PyTorch parity on the
// fixtures of tests/fixtures/layer/gen_layer.py (positional_layer.py), its kernels against float64
// and their scalar references, config and position errors, and long sequences.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "nn/softmax.hpp"
#include "posenc/nn/gemm.hpp"
#include "posenc/nn/position_step.hpp"
#include "posenc/nn/transformer_layer.hpp"
#include "test_layer_util.hpp"

using namespace posenc;
using layer_test::max_abs_diff;

namespace {

const char* const kPositionFixtures[] = {
    "rotary-post-relu-d64",
    "rotary-pre-gelu-d30-causal-interleaved",
    "rotary-post-gelu-d64-pad-partial",
    "rotary-pre-relu-d48-causal-pad-partial-interleaved",
    "rotary-post-relu-d6-positions",
    "alibi-causal-post-relu-d64",
    "alibi-causal-pre-gelu-d36-h6-pad",
    "alibi-symmetric-post-gelu-d40-h5-pad",
    "alibi-symmetric-pre-relu-d64-h8-offset",
    "alibi-causal-post-relu-d30-h3-positions",
};

PositionConfig position_from_json(const nlohmann::json& p) {
  PositionConfig c;
  const std::string method = p.at("method").get<std::string>();
  if (method == "rotary") {
    c.method = PositionMethod::rotary;
    c.rope_theta = p.at("ropeTheta").get<double>();
    c.rotary_dim = p.at("rotaryDim").get<std::int64_t>();
    c.rotary_layout = p.at("rotaryLayout").get<std::string>() == "interleaved"
                          ? RotaryLayout::interleaved
                          : RotaryLayout::half;
  } else if (method == "alibi") {
    c.method = PositionMethod::alibi;
    c.alibi_mode = p.at("alibiMode").get<std::string>() == "symmetric" ? AlibiMode::symmetric
                                                                       : AlibiMode::causal;
  }
  return c;
}

TransformerEncoderLayer make_layer(const LayerConfig& config, std::int64_t seed) {
  TransformerEncoderLayer layer;
  REQUIRE(layer.configure(config).ok());
  for (const auto& t : layer_test::layer_state(seed, config.d_model, config.ff_dim))
    REQUIRE(layer.set_tensor(t.name, t.values.data(), t.values.size()).ok());
  return layer;
}

LayerConfig small_config(PositionMethod method) {
  LayerConfig c;
  c.d_model = 16;
  c.heads = 2;
  c.ff_dim = 24;
  c.position.method = method;
  return c;
}

}  // namespace

TEST_CASE("position step: rotary and ALiBi layers match the PyTorch reference",
          "[layer][position]") {
  for (const char* name : kPositionFixtures) {
    const auto fx = layer_test::load_json(std::string("layer/") + name + ".json");
    INFO("fixture " << name);
    REQUIRE(fx.is_object());
    LayerConfig config = layer_test::config_from_json(fx.at("config"));
    config.position = position_from_json(fx.at("position"));
    const std::int64_t seed = fx.at("seed").get<std::int64_t>();
    const std::int64_t length = fx.at("length").get<std::int64_t>();
    TransformerEncoderLayer layer = make_layer(config, seed);
    const auto x = layer_test::layer_input(seed, length, config.d_model);
    ForwardOptions options;
    options.causal = fx.at("causal").get<bool>();
    std::vector<std::uint8_t> mask;
    if (!fx.at("keyPaddingMask").is_null()) {
      mask = fx.at("keyPaddingMask").get<std::vector<std::uint8_t>>();
      options.key_padding_mask = mask.data();
    }
    std::vector<double> positions;
    if (!fx.at("positions").is_null()) {
      positions = fx.at("positions").get<std::vector<double>>();
      options.positions = positions.data();
    }
    if (!fx.at("positionOffset").is_null())
      options.position_offset = fx.at("positionOffset").get<double>();
    std::vector<float> out(x.size());
    const LayerError e = layer.forward(x.data(), x.size(), length, options, out.data(), out.size());
    INFO(e.message());
    REQUIRE(e.ok());
    const double err = max_abs_diff(out, fx.at("expected").get<std::vector<double>>());
    const auto attn = fx.at("attention").get<std::vector<double>>();
    REQUIRE(layer.attention_length() == length);
    const std::vector<float> probs(layer.attention(), layer.attention() + attn.size());
    const double err_attn = max_abs_diff(probs, attn);
    std::printf("[position] %-52s %s max|posenc - torch| %.2e  attention %.2e\n", name,
                gemm_uses_simd() ? "simd  " : "scalar", err, err_attn);
    CHECK(err <= 4e-6);
    CHECK(err_attn <= 1e-6);
    // Without the step (position_step = false) the layer is the plain one: not the fixture.
    options.position_step = false;
    std::vector<float> plain(x.size());
    REQUIRE(layer.forward(x.data(), x.size(), length, options, plain.data(), plain.size()).ok());
    CHECK(max_abs_diff(plain, out) > 1e-3);
  }
}

TEST_CASE("position step: e^x and the softmax row kernel", "[layer][position]") {
  // e^x within 2 ulp of float64 over [-87.3, 0], 0 below.
  double worst_ulps = 0.0;
  for (int i = 0; i <= 200000; ++i) {
    const float x = static_cast<float>(-87.3 * i / 200000.0);
    const double want = std::exp(static_cast<double>(x));
    const float got = detail::exp_nonpositive(x);
    const double ulp = std::ldexp(1.0, std::ilogb(want) - 23);
    worst_ulps = std::max(worst_ulps, std::fabs(got - want) / ulp);
  }
  CHECK(worst_ulps <= 2.0);
  CHECK(detail::exp_nonpositive(0.0f) == 1.0f);
  CHECK(detail::exp_nonpositive(-100.0f) == 0.0f);
  CHECK(detail::exp_nonpositive(-INFINITY) == 0.0f);
  // The SIMD row kernel equals the scalar one bit for bit, with and without key positions.
  for (std::int64_t n : {1, 3, 4, 5, 8, 13, 64, 67}) {
    const auto scores = layer_test::lcg_values(n, static_cast<std::size_t>(n), 30.0);
    std::vector<std::int32_t> key_pos(static_cast<std::size_t>(n) + 4);
    for (std::int64_t c = 0; c < n; ++c)
      key_pos[c] = static_cast<std::int32_t>((c * 7) % n);
    for (std::int64_t count : {n, n / 2, std::int64_t{0}}) {
      for (bool with_pos : {false, true}) {
        for (std::int32_t last : {0, 2, static_cast<std::int32_t>(n)}) {
          std::vector<float> a(scores), b(scores);
          const std::int32_t* kp = with_pos ? key_pos.data() : nullptr;
          detail::softmax_row(a.data(), n, count, kp, last);
          detail::softmax_row_scalar(b.data(), n, count, kp, last);
          INFO("n " << n << " count " << count << " positions " << with_pos << " last " << last);
          REQUIRE(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
          double sum = 0.0;
          for (std::int64_t c = 0; c < n; ++c) {
            const bool vis = c < count && (!with_pos || key_pos[c] <= last);
            if (!vis) CHECK(a[c] == 0.0f);
            sum += a[c];
          }
          CHECK((sum == 0.0 || std::fabs(sum - 1.0) < 1e-6));
        }
      }
    }
  }
}

TEST_CASE("position step: the softmax's bias pass equals adding the bias first",
          "[layer][position]") {
  for (std::int64_t n : {1, 5, 8, 67}) {
    const auto scores = layer_test::lcg_values(n + 9, static_cast<std::size_t>(n), 20.0);
    const auto bias = layer_test::lcg_values(n + 10, static_cast<std::size_t>(n) + 4, 5.0);
    for (std::int64_t count : {n, (n + 1) / 2}) {
      std::vector<float> added(scores), fused(scores), fused_scalar(scores);
      for (std::int64_t c = 0; c < count; ++c)
        added[c] += bias[c];
      detail::softmax_row(added.data(), n, count, nullptr, 0);
      detail::softmax_row(fused.data(), n, count, nullptr, 0, bias.data());
      detail::softmax_row_scalar(fused_scalar.data(), n, count, nullptr, 0, bias.data());
      INFO("n " << n << " count " << count);
      CHECK(std::memcmp(added.data(), fused.data(), added.size() * sizeof(float)) == 0);
      CHECK(std::memcmp(fused.data(), fused_scalar.data(), fused.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("position step: rotate_heads and alibi_slopes against float64", "[layer][position]") {
  for (double theta : {1.5, 500.0, 10000.0, 1e6})
    for (RotaryLayout layout : {RotaryLayout::half, RotaryLayout::interleaved}) {
      for (std::int64_t r : {2, 6, 8, 200}) {
        const std::int64_t rows = 3, heads = 2, head_dim = r == 200 ? 200 : 10,
                           stride = 2 * head_dim + 3;
        const auto x0 = layer_test::lcg_values(r, static_cast<std::size_t>(rows * stride), 2.0);
        std::vector<float> x(x0);
        const double positions[] = {0.0, 7.0, 2147483647.0};
        std::vector<double> frequencies(static_cast<std::size_t>(r / 2));
        REQUIRE(rotary_frequencies_of(theta, r, frequencies.data()));
        RotaryParams params;
        params.rotary_dim = r;
        params.layout = layout;
        params.frequencies = frequencies.data();
        rotate_heads(x.data(), rows, heads, head_dim, stride, params, positions);
        double worst = 0.0;
        for (std::int64_t row = 0; row < rows; ++row)
          for (std::int64_t h = 0; h < heads; ++h)
            for (std::int64_t k = 0; k < r / 2; ++k) {
              const std::int64_t base = row * stride + h * head_dim;
              const std::int64_t ia = layout == RotaryLayout::half ? k : 2 * k;
              const std::int64_t ib = layout == RotaryLayout::half ? k + r / 2 : 2 * k + 1;
              const double angle = positions[row] * std::pow(theta, -2.0 * k / r);
              // The frequency is within 1e-14 of pow's (relative): at position 2^31 - 1 that moves
              // the angle by up to 2e-5.
              const double slack = positions[row] * std::pow(theta, -2.0 * k / r) * 1e-14;
              const double a = x0[base + ia], b = x0[base + ib];
              const double scale = std::fabs(a) + std::fabs(b);
              const double ea =
                  std::fabs(x[base + ia] - (a * std::cos(angle) - b * std::sin(angle)));
              const double eb =
                  std::fabs(x[base + ib] - (b * std::cos(angle) + a * std::sin(angle)));
              worst = std::max(worst, std::max(ea, eb) - slack * scale);
            }
        INFO("theta " << theta << " r " << r);
        CHECK(worst < 1e-6);
        // Dims past r and the gap between rows are untouched.
        for (std::int64_t row = 0; row < rows; ++row) {
          for (std::int64_t h = 0; h < heads; ++h)
            for (std::int64_t c = r; c < head_dim; ++c)
              CHECK(x[row * stride + h * head_dim + c] == x0[row * stride + h * head_dim + c]);
          for (std::int64_t c = heads * head_dim; c < stride; ++c)
            CHECK(x[row * stride + c] == x0[row * stride + c]);
        }
      }
    }
  double s[kMaxHeads];
  alibi_slopes(8, s, 8);
  for (int h = 0; h < 8; ++h)
    CHECK(s[h] == std::ldexp(1.0, -(h + 1)));
  alibi_slopes(4, s, 4);
  CHECK((s[0] == 0.25 && s[1] == 0.0625 && s[2] == 0.015625 && s[3] == 0.00390625));
  alibi_slopes(6, s, 6);  // 4 of get_slopes(4), then get_slopes(8)[0::2][:2]
  CHECK((s[0] == 0.25 && s[3] == 0.00390625 && s[4] == 0.5 && s[5] == 0.125));
  alibi_slopes(1, s, 1);
  CHECK(s[0] == 1.0 / 256.0);
  alibi_slopes(3, s, 3);  // get_slopes(2) = [2^-4, 2^-8], then get_slopes(4)[0] = 2^-2
  CHECK((s[0] == 0.0625 && s[1] == 0.00390625 && s[2] == 0.25));
  // More heads: the Python float64 values (get_slopes of positional_layer.py) within 1e-14.
  struct Known {
    std::int64_t heads, index;
    double value;
  };
  const Known known[] = {{12, 0, 0.5},
                         {12, 11, 0.08838834764831849},
                         {16, 0, 0.7071067811865476},
                         {16, 1, 0.5000000000000001},
                         {16, 15, 0.003906250000000004},
                         {256, 0, 0.9785720620877001},
                         {256, 255, 0.0039062499999999536}};
  for (const Known& k : known) {
    alibi_slopes(k.heads, s, k.heads);
    INFO("heads " << k.heads << " slope " << k.index);
    CHECK(std::fabs(s[k.index] / k.value - 1.0) < 1e-14);
  }
  // The test weights' scale rounds halves to even like lcg.py (d 128, ff 512 in the benchmarks).
  CHECK(layer_test::pow2_scale(32) == 0.25);
  CHECK(layer_test::pow2_scale(128) == 1.0 / 16);
  CHECK(layer_test::pow2_scale(512) == 1.0 / 16);
}

TEST_CASE("position step: bad config fields and positions give named errors", "[layer][position]") {
  TransformerEncoderLayer layer;
  LayerConfig c = small_config(PositionMethod::rotary);
  c.position.rope_theta = 1.0;
  CHECK(layer.configure(c).name == "ropeTheta");
  c.position.rope_theta = NAN;
  CHECK(layer.configure(c).name == "ropeTheta");
  c.position.rope_theta = 10000.0;
  c.position.rotary_dim = 3;
  CHECK(layer.configure(c).name == "rotaryDim");
  c.position.rotary_dim = 10;  // head dim 8
  CHECK(layer.configure(c).name == "rotaryDim");
  c.position.rotary_dim = 0;
  c.position.rotary_layout = static_cast<RotaryLayout>(7);
  CHECK(layer.configure(c).name == "rotaryLayout");
  c.position.rotary_layout = RotaryLayout::half;
  c.d_model = 18;  // head dim 9, odd: rotaryDim 0 cannot mean all of it
  CHECK(layer.configure(c).name == "rotaryDim");
  c.d_model = 16;
  c.position.method = static_cast<PositionMethod>(9);
  CHECK(layer.configure(c).name == "position");
  c.position.method = PositionMethod::alibi;
  c.position.alibi_mode = static_cast<AlibiMode>(5);
  CHECK(layer.configure(c).name == "alibiMode");
  c.position.alibi_mode = AlibiMode::symmetric;
  REQUIRE(layer.configure(c).ok());
  for (const auto& t : layer_test::layer_state(2, 16, 24))
    REQUIRE(layer.set_tensor(t.name, t.values.data(), t.values.size()).ok());
  const auto x = layer_test::layer_input(2, 4, 16);
  std::vector<float> out(x.size());
  ForwardOptions o;
  o.position_offset = 2147483645.0;  // the last row at 2^31 + 1
  LayerError e = layer.forward(x.data(), x.size(), 4, o, out.data(), out.size());
  CHECK(e.status == LayerStatus::invalid_position);
  CHECK(e.name == "positionOffset");
  o.position_offset = 0.0;
  const double bad[] = {0.0, 1.0, NAN, 3.0};
  o.positions = bad;
  e = layer.forward(x.data(), x.size(), 4, o, out.data(), out.size());
  CHECK(e.name == "positions[2]");
  CHECK(e.message() ==
        "positions[2]: row position must be finite, with absolute value at most "
        "2^31 - 1");
  const double good[] = {-5.0, 1.0, 2147483647.0, 3.0};
  o.positions = good;
  CHECK(layer.forward(x.data(), x.size(), 4, o, out.data(), out.size()).ok());
}

TEST_CASE("position step: only distances matter; rows before i do not see later rows",
          "[layer][position]") {
  for (PositionMethod method : {PositionMethod::rotary, PositionMethod::alibi}) {
    TransformerEncoderLayer layer = make_layer(small_config(method), 5);
    const std::int64_t l = 40;
    const auto x = layer_test::layer_input(5, l, 16);
    std::vector<float> a(x.size()), b(x.size());
    ForwardOptions o;
    o.causal = true;
    REQUIRE(layer.forward(x.data(), x.size(), l, o, a.data(), a.size()).ok());
    o.position_offset = 1000.0;  // every distance the same: equal to rounding
    REQUIRE(layer.forward(x.data(), x.size(), l, o, b.data(), b.size()).ok());
    CHECK(max_abs_diff(a, b) < 2e-5);
    // Causal: the first 24 rows of a forward over 40 are a forward over 24, bit for bit.
    o.position_offset = 0.0;
    std::vector<float> head(24 * 16);
    REQUIRE(layer.forward(x.data(), head.size(), 24, o, head.data(), head.size()).ok());
    CHECK(std::memcmp(head.data(), a.data(), head.size() * sizeof(float)) == 0);
    // Explicit positions 3.5, 4.5, ... (ALiBi: the general float64 path) equal the offset 3.5
    // (ALiBi: the table by row distance) bit for bit, with and without hidden keys.
    std::vector<double> rows(static_cast<std::size_t>(l));
    for (std::int64_t i = 0; i < l; ++i)
      rows[static_cast<std::size_t>(i)] = 3.5 + static_cast<double>(i);
    std::vector<std::uint8_t> pad(static_cast<std::size_t>(l), 0);
    pad[3] = pad[17] = pad[39] = 1;
    for (bool padded : {false, true}) {
      ForwardOptions e, t;
      e.causal = t.causal = !padded;
      e.key_padding_mask = t.key_padding_mask = padded ? pad.data() : nullptr;
      e.positions = rows.data();
      t.position_offset = 3.5;
      REQUIRE(layer.forward(x.data(), x.size(), l, e, a.data(), a.size()).ok());
      REQUIRE(layer.forward(x.data(), x.size(), l, t, b.data(), b.size()).ok());
      CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("position step: L = 4096 runs, and its causal prefix is the short forward bit for bit",
          "[layer][position][long]") {
  for (PositionMethod method : {PositionMethod::rotary, PositionMethod::alibi}) {
    TransformerEncoderLayer layer = make_layer(small_config(method), 7);
    const std::int64_t l = 4096;
    const auto x = layer_test::layer_input(7, l, 16);
    std::vector<float> out(x.size());
    ForwardOptions o;
    o.causal = true;
    REQUIRE(layer.forward(x.data(), x.size(), l, o, out.data(), out.size()).ok());
    REQUIRE(layer.attention_length() == l);
    const float* p = layer.attention();
    double row_sum = 0.0;  // the last query row of head 1 sums to 1; row 0 sees only key 0
    for (std::int64_t j = 0; j < l; ++j)
      row_sum += p[(1 * l + l - 1) * l + j];
    CHECK(std::fabs(row_sum - 1.0) < 1e-5);
    CHECK(p[0] == 1.0f);
    std::vector<float> head(100 * 16);
    REQUIRE(layer.forward(x.data(), head.size(), 100, o, head.data(), head.size()).ok());
    CHECK(std::memcmp(head.data(), out.data(), head.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("layer: configure() after a forward starts a fresh workspace", "[layer][position]") {
  // A larger dModel and a position step after a forward at the same length: the workspace of the
  // first config must not be reused (ASan builds catch an overrun).
  TransformerEncoderLayer layer = make_layer(small_config(PositionMethod::none), 3);
  const auto x = layer_test::layer_input(3, 9, 16);
  std::vector<float> out(x.size());
  REQUIRE(layer.forward(x.data(), x.size(), 9, {}, out.data(), out.size()).ok());
  LayerConfig wide = small_config(PositionMethod::alibi);
  wide.d_model = 32;
  wide.ff_dim = 40;
  REQUIRE(layer.configure(wide).ok());
  CHECK(layer.attention() == nullptr);
  for (const auto& t : layer_test::layer_state(4, 32, 40))
    REQUIRE(layer.set_tensor(t.name, t.values.data(), t.values.size()).ok());
  TransformerEncoderLayer fresh = make_layer(wide, 4);
  const auto x2 = layer_test::layer_input(4, 9, 32);
  std::vector<float> a(x2.size()), b(x2.size());
  REQUIRE(layer.forward(x2.data(), x2.size(), 9, {}, a.data(), a.size()).ok());
  REQUIRE(fresh.forward(x2.data(), x2.size(), 9, {}, b.data(), b.size()).ok());
  CHECK(a == b);
}
