// Permutation equivariance: without a positional encoding, permuting the input tokens
// of the encoder layer (and of the model) permutes its outputs and attention probabilities bit
// for bit; with the positional encoding added, or a rotary or ALiBi step, it does not.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "posenc/nn/gemm.hpp"
#include "posenc/nn/model.hpp"
#include "posenc/nn/transformer_layer.hpp"
#include "posenc/sinusoidal/encode.hpp"
#include "posenc/sinusoidal/presets.hpp"
#include "test_layer_util.hpp"

using namespace posenc;

namespace {

// A Fisher-Yates permutation of 0..n-1 from the test LCG.
std::vector<std::int64_t> random_permutation(std::int64_t n, std::uint32_t seed) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    p[static_cast<std::size_t>(i)] = i;
  std::uint32_t state = seed * 2654435761u + 1u;
  for (std::int64_t i = n - 1; i > 0; --i) {
    state = state * 1664525u + 1013904223u;
    const std::int64_t j =
        static_cast<std::int64_t>((state >> 8) % static_cast<std::uint32_t>(i + 1));
    std::swap(p[static_cast<std::size_t>(i)], p[static_cast<std::size_t>(j)]);
  }
  return p;
}

// rows[i] of the result = rows[perm[i]] of `rows` (width floats per row).
template <class T>
std::vector<T> permute_rows(const std::vector<T>& rows, const std::vector<std::int64_t>& perm,
                            std::int64_t width) {
  std::vector<T> out(rows.size());
  for (std::size_t i = 0; i < perm.size(); ++i)
    std::copy_n(rows.begin() + perm[i] * width, width,
                out.begin() + static_cast<std::int64_t>(i) * width);
  return out;
}

std::vector<std::uint32_t> bits(const float* v, std::size_t n) {
  std::vector<std::uint32_t> out(n);
  std::memcpy(out.data(), v, n * sizeof(float));
  return out;
}
std::vector<std::uint32_t> bits(const std::vector<float>& v) {
  return bits(v.data(), v.size());
}

// How many entries of a and b differ in any bit (0: bit-for-bit equal). Keeps failure messages
// short where comparing the vectors would print them whole.
std::size_t bit_mismatches(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return a.size() + b.size();
  const auto x = bits(a), y = bits(b);
  std::size_t n = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    n += x[i] != y[i];
  return n;
}

// probs (heads x L x L) with both axes permuted: out[h][i][j] = probs[h][perm[i]][perm[j]].
std::vector<float> permute_attention(const float* probs, std::int64_t heads,
                                     const std::vector<std::int64_t>& perm) {
  const std::int64_t l = static_cast<std::int64_t>(perm.size());
  std::vector<float> out(static_cast<std::size_t>(heads * l * l));
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t i = 0; i < l; ++i)
      for (std::int64_t j = 0; j < l; ++j)
        out[static_cast<std::size_t>((h * l + i) * l + j)] =
            probs[(h * l + perm[static_cast<std::size_t>(i)]) * l +
                  perm[static_cast<std::size_t>(j)]];
  return out;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  return layer_test::max_abs_diff(a, b);
}

TransformerEncoderLayer make_layer(const LayerConfig& config, std::int64_t seed) {
  TransformerEncoderLayer layer;
  REQUIRE(layer.configure(config).ok());
  for (const auto& t : layer_test::layer_state(seed, config.d_model, config.ff_dim))
    REQUIRE(layer
                .set_tensor(t.name, t.values.data(), t.values.size(), t.shape.data(),
                            static_cast<int>(t.shape.size()))
                .ok());
  return layer;
}

struct Run {
  std::vector<float> out, attention;
};

Run forward(TransformerEncoderLayer& layer, const std::vector<float>& x, std::int64_t length,
            const std::vector<std::uint8_t>& mask) {
  ForwardOptions options;
  if (!mask.empty()) options.key_padding_mask = mask.data();
  Run r;
  r.out.resize(x.size());
  const LayerError e =
      layer.forward(x.data(), x.size(), length, options, r.out.data(), r.out.size());
  INFO(e.message());
  REQUIRE(e.ok());
  const std::size_t count = static_cast<std::size_t>(layer.config().heads * length * length);
  r.attention.assign(layer.attention(), layer.attention() + count);
  // Not vacuous: every query's probabilities sum to 1 (each case leaves some key visible).
  double worst = 0.0;
  for (std::size_t row = 0; row < count; row += static_cast<std::size_t>(length)) {
    double sum = 0.0;
    for (std::int64_t j = 0; j < length; ++j)
      sum += r.attention[row + static_cast<std::size_t>(j)];
    worst = std::max(worst, std::fabs(sum - 1.0));
  }
  CHECK(worst < 1e-5);
  return r;
}

struct Case {
  const char* name;
  std::int64_t d, heads, ff;
  bool norm_first;
  Activation activation;
  std::int64_t length;
  bool duplicates;  // some input rows repeated (the same word twice)
};

const Case kCases[] = {
    {"post-relu-d6", 6, 2, 10, false, Activation::relu, 7, false},
    {"pre-gelu-d6-dup", 6, 3, 12, true, Activation::gelu, 9, true},
    {"post-gelu-d30", 30, 3, 50, false, Activation::gelu, 13, false},
    {"pre-relu-d30-dup", 30, 5, 40, true, Activation::relu, 11, true},
    {"post-relu-d10", 10, 2, 18, false, Activation::relu, 33, true},
    {"pre-gelu-d66", 66, 6, 70, true, Activation::gelu, 21, false},
};

LayerConfig config_of(const Case& c) {
  LayerConfig config;
  config.d_model = c.d;
  config.heads = c.heads;
  config.ff_dim = c.ff;
  config.norm_first = c.norm_first;
  config.activation = c.activation;
  return config;
}

}  // namespace

TEST_CASE("gemm: each output row is the same whatever its position among the rows",
          "[layer][gemm][permutation]") {
  // The layer's equivariance rests on this: full 4-row tiles, the 1-row tail and the ragged last
  // column panel compute every row with the same operations.
  for (std::int64_t m : {1, 2, 3, 5, 6, 7, 9, 13}) {
    for (std::int64_t n : {1, 3, 8, 11, 17}) {
      for (std::int64_t k : {1, 6, 33}) {
        const auto a =
            layer_test::lcg_values(m * 131 + n * 7 + k, static_cast<std::size_t>(m * k), 2.0);
        const auto w = layer_test::lcg_values(n * 3 + k, static_cast<std::size_t>(n * k), 0.5);
        const auto bias = layer_test::lcg_values(n + 5, static_cast<std::size_t>(n), 0.25);
        PackedMatrix packed;
        REQUIRE(packed.pack_transposed(w.data(), n, k, k));
        for (std::uint32_t s = 1; s <= 3; ++s) {
          const auto perm = random_permutation(m, s + static_cast<std::uint32_t>(m * 100 + n));
          const auto pa = permute_rows(a, perm, k);
          for (Epilogue e : {Epilogue::none, Epilogue::relu, Epilogue::gelu}) {
            for (bool scalar : {false, true}) {
              std::vector<float> c(static_cast<std::size_t>(m * n)), pc(c.size());
              auto f = [scalar](const float* x, std::int64_t lda, std::int64_t rows,
                                const PackedMatrix& b, const float* bias_row, Epilogue ep,
                                float* out, std::int64_t ldc) {
                if (scalar) {
                  gemm_scalar(x, lda, rows, b, bias_row, ep, out, ldc);
                } else {
                  gemm(x, lda, rows, b, bias_row, ep, out, ldc);
                }
              };
              f(a.data(), k, m, packed, bias.data(), e, c.data(), n);
              f(pa.data(), k, m, packed, bias.data(), e, pc.data(), n);
              INFO("m " << m << " n " << n << " k " << k << " epilogue " << int(e) << " scalar "
                        << scalar);
              REQUIRE(bit_mismatches(pc, permute_rows(c, perm, n)) == 0);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("layer without PE: permuting the tokens permutes the output and attention bit for bit",
          "[layer][permutation]") {
  std::int64_t seed = 40;
  for (const Case& c : kCases) {
    for (bool padded : {false, true}) {
      ++seed;
      LayerConfig config = config_of(c);
      TransformerEncoderLayer layer = make_layer(config, seed);
      std::vector<float> x = layer_test::layer_input(seed, c.length, c.d);
      if (c.duplicates) {  // rows 1 and 4 repeat row 0; row 3 repeats row 2
        std::copy_n(x.begin(), c.d, x.begin() + 1 * c.d);
        std::copy_n(x.begin(), c.d, x.begin() + 4 * c.d);
        std::copy_n(x.begin() + 2 * c.d, c.d, x.begin() + 3 * c.d);
      }
      std::vector<std::uint8_t> mask;
      if (padded) {  // hide a third of the keys, spread out (one of the repeated rows among them)
        mask.assign(static_cast<std::size_t>(c.length), 0);
        for (std::int64_t j = 1; j < c.length; j += 3)
          mask[static_cast<std::size_t>(j)] = 1;
      }
      const Run base = forward(layer, x, c.length, mask);
      for (std::uint32_t s = 1; s <= 4; ++s) {
        const auto perm = random_permutation(c.length, s * 977u + static_cast<std::uint32_t>(seed));
        const auto px = permute_rows(x, perm, c.d);
        const auto pmask = mask.empty() ? mask : permute_rows(mask, perm, 1);
        const Run moved = forward(layer, px, c.length, pmask);
        INFO(c.name << (padded ? " padded" : "") << " permutation " << s << ": max |diff| "
                    << max_abs_diff(moved.out, permute_rows(base.out, perm, c.d)));
        CHECK(bit_mismatches(moved.out, permute_rows(base.out, perm, c.d)) == 0);
        CHECK(bit_mismatches(moved.attention,
                             permute_attention(base.attention.data(), c.heads, perm)) == 0);
      }
    }
  }
}

TEST_CASE("layer with PE added to the input: permuting the tokens does not permute the output",
          "[layer][permutation]") {
  for (const Case& c : kCases) {
    LayerConfig config = config_of(c);
    TransformerEncoderLayer layer = make_layer(config, 7);
    const std::vector<float> emb = layer_test::layer_input(8, c.length, c.d);
    std::vector<float> table(emb.size());
    RowPositions rows;
    rows.count = c.length;
    REQUIRE(encode(preset_spec(Preset::vaswani, c.d), rows, table.data(), table.size()) ==
            Status::ok);
    auto with_pe = [&](std::vector<float> v) {
      for (std::size_t i = 0; i < v.size(); ++i)
        v[i] += table[i];
      return v;
    };
    const Run base = forward(layer, with_pe(emb), c.length, {});
    const auto perm = random_permutation(c.length, 3);
    const Run moved = forward(layer, with_pe(permute_rows(emb, perm, c.d)), c.length, {});
    const double out_diff = max_abs_diff(moved.out, permute_rows(base.out, perm, c.d));
    const double attn_diff =
        max_abs_diff(moved.attention, permute_attention(base.attention.data(), c.heads, perm));
    INFO(c.name << ": max |out diff| " << out_diff << ", attention " << attn_diff);
    CHECK(out_diff > 1e-2);
    CHECK(attn_diff > 1e-3);
  }
}

TEST_CASE("model without PE: 'the dog bit the man' and 'the man bit the dog' swap exactly",
          "[layer][model][permutation]") {
  const auto bytes = layer_test::load_bytes("model/tagger.safetensors");
  const auto fx = layer_test::load_json("model/tagger.json");
  REQUIRE(fx.is_object());
  Model model;
  REQUIRE(model.load(bytes.data(), bytes.size()).ok());
  const auto vocab = fx.at("vocab").get<std::vector<std::string>>();
  auto id = [&](const std::string& w) {
    const auto at = std::find(vocab.begin(), vocab.end(), w);
    REQUIRE(at != vocab.end());
    return static_cast<std::int32_t>(at - vocab.begin());
  };
  const std::int64_t classes = model.config().num_classes;
  const std::int64_t heads = model.config().layer.heads;
  const std::int64_t layers = model.config().num_layers;
  struct Out {
    std::vector<float> logits;
    std::vector<std::vector<float>> attention;  // per layer
  };
  auto run = [&](const std::vector<std::int32_t>& tokens, bool pe) {
    const std::int64_t l = static_cast<std::int64_t>(tokens.size());
    Out o;
    o.logits.resize(static_cast<std::size_t>(l * classes));
    ModelForwardOptions options;
    options.positional_encoding = pe;
    REQUIRE(model.forward(tokens.data(), l, options, o.logits.data(), o.logits.size()).ok());
    for (std::int64_t i = 0; i < layers; ++i)
      o.attention.emplace_back(model.attention(i), model.attention(i) + heads * l * l);
    return o;
  };

  // The sentence: positions 1 and 4 swapped; also every held-out sentence under random orders.
  std::vector<std::vector<std::int32_t>> sentences = {
      {id("the"), id("dog"), id("bit"), id("the"), id("man")}};
  for (const auto& c : fx.at("cases"))
    sentences.push_back(c.at("tokens").get<std::vector<std::int32_t>>());
  std::uint32_t s = 0;
  for (const auto& tokens : sentences) {
    const std::int64_t l = static_cast<std::int64_t>(tokens.size());
    std::vector<std::vector<std::int64_t>> perms;
    if (s == 0) perms.push_back({0, 4, 2, 3, 1});  // "the man bit the dog"
    perms.push_back(random_permutation(l, ++s));
    const Out base = run(tokens, false);
    for (const auto& perm : perms) {
      const Out moved = run(permute_rows(tokens, perm, 1), false);
      INFO("sentence " << s << ": max |diff| "
                       << max_abs_diff(moved.logits, permute_rows(base.logits, perm, classes)));
      CHECK(bit_mismatches(moved.logits, permute_rows(base.logits, perm, classes)) == 0);
      for (std::int64_t i = 0; i < layers; ++i)
        CHECK(bit_mismatches(moved.attention[static_cast<std::size_t>(i)],
                             permute_attention(base.attention[static_cast<std::size_t>(i)].data(),
                                               heads, perm)) == 0);
    }
  }

  // "the dog bit the man": the dog's and the man's logits trade places exactly.
  const std::vector<std::int32_t> s1 = {id("the"), id("dog"), id("bit"), id("the"), id("man")};
  const std::vector<std::int32_t> s2 = {id("the"), id("man"), id("bit"), id("the"), id("dog")};
  const Out a = run(s1, false), b = run(s2, false);
  CHECK(bits(&a.logits[1 * classes], classes) == bits(&b.logits[4 * classes], classes));
  CHECK(bits(&a.logits[4 * classes], classes) == bits(&b.logits[1 * classes], classes));
  // The two "the" are the same token: their rows are equal within each sentence.
  CHECK(bits(&a.logits[0], classes) == bits(&a.logits[3 * classes], classes));

  // With PE the model tells them apart: the dog acts in s1, is acted upon in s2.
  const Out pa = run(s1, true), pb = run(s2, true);
  CHECK(max_abs_diff(pb.logits, permute_rows(pa.logits, {0, 4, 2, 3, 1}, classes)) > 1.0);
}

TEST_CASE("layer with rotary or ALiBi: permuting the tokens changes the output beyond rounding",
          "[layer][permutation][position]") {
  // Positions break the symmetry by design: no exact property to keep. The same layer run
  // without its position step (position_step = false) is exactly equivariant again.
  for (const Case& c : kCases) {
    for (PositionMethod method : {PositionMethod::rotary, PositionMethod::alibi}) {
      LayerConfig config = config_of(c);
      config.position.method = method;
      config.position.alibi_mode = AlibiMode::symmetric;
      if (method == PositionMethod::rotary && (c.d / c.heads) % 2 != 0)
        config.position.rotary_dim = c.d / c.heads - 1;  // partial: head dims 3, 11
      TransformerEncoderLayer layer = make_layer(config, 9);
      const std::vector<float> x = layer_test::layer_input(10, c.length, c.d);
      const auto perm = random_permutation(c.length, 5);
      const auto px = permute_rows(x, perm, c.d);
      const Run base = forward(layer, x, c.length, {});
      const Run moved = forward(layer, px, c.length, {});
      const double out_diff = max_abs_diff(moved.out, permute_rows(base.out, perm, c.d));
      INFO(c.name << (method == PositionMethod::rotary ? " rotary" : " alibi")
                  << ": max |out diff| " << out_diff);
      CHECK(out_diff > 1e-3);

      ForwardOptions off;
      off.position_step = false;
      std::vector<float> a(x.size()), b(x.size());
      REQUIRE(layer.forward(x.data(), x.size(), c.length, off, a.data(), a.size()).ok());
      REQUIRE(layer.forward(px.data(), px.size(), c.length, off, b.data(), b.size()).ok());
      CHECK(bit_mismatches(b, permute_rows(a, perm, c.d)) == 0);
    }
  }
}
