// RotaryEmbedding against float64 references: cos_sin within 2^-22 (and almost always the
// correctly rounded float32), apply within 2^-22 x A x the pair's norm, at the positions 0, 1,
// 4095, 4096, 2^20 + 3, 2^24 - 1 and random ones; both layouts, partial rotary, attention
// scaling, chunking and single rows equal to the bulk call bit for bit.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "oracle.hpp"
#include "posenc/posenc.hpp"
#include "test_rotary_util.hpp"

using namespace posenc;
using namespace rotary_test;

namespace {

constexpr double kBound = 0x1p-22;

RotaryEmbedding make(const RotarySpec& spec) {
  RotaryEmbedding rot;
  const EncodingError e = rot.init(spec);
  INFO(e.message);
  REQUIRE(e.ok());
  return rot;
}

RotarySpec explicit_spec(std::int64_t head_dim, std::int64_t rotary_dim, RotaryLayout layout,
                         double base = 10000.0) {
  RotarySpec s;
  s.head_dim = head_dim;
  s.rotary_dim = rotary_dim;
  s.layout = layout;
  s.base = base;
  return s;
}

std::vector<double> test_positions() {
  std::vector<double> p = key_positions();
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::int64_t> u(0, (1 << 24) - 1);
  for (int i = 0; i < 10; ++i)
    p.push_back(static_cast<double>(u(rng)));
  return p;
}

// Index of frequency i's cosine columns in a cos_sin row of the layout.
std::int64_t column(RotaryLayout layout, std::int64_t n, std::int64_t i, int which) {
  return layout == RotaryLayout::half ? i + which * n : 2 * i + which;
}

}  // namespace

TEST_CASE("rotary cos_sin: every value the correctly rounded float32, rows and blocks",
          "[rotary]") {
  std::int64_t values = 0, ties = 0;
  for (RotaryLayout layout : {RotaryLayout::half, RotaryLayout::interleaved}) {
    for (std::int64_t rd : {2, 6, 64, 128}) {
      const RotaryEmbedding rot = make(explicit_spec(rd + 2, rd, layout));
      // Explicit options without scaling: the real frequencies base^(-2i/rd), the paper table's
      // w_i for a spec of dim rd (oracle::real_frequency), their heads the nearest doubles.
      posenc::Spec paper;
      paper.dim = rd;
      const std::int64_t n = rd / 2;
      std::vector<oracle::QuadFrequency> w;
      for (std::int64_t i = 0; i < n; ++i) {
        w.push_back(oracle::real_frequency(paper, i));
        CHECK(rot.inverse_frequencies()[static_cast<std::size_t>(i)] == w.back().hi);
      }
      std::vector<double> explicit_positions = test_positions();
      for (double f : {12345.5, 1048576.75, 16777214.25, 16777000.125})
        explicit_positions.push_back(f);  // fractional positions: the per-row path
      // Explicit positions (the per-row path), then consecutive rows from offsets (the block
      // path: anchors every 32 positions and angle addition), near 0 and near 2^24.
      for (double first : {-1.0, 0.0, 16777215.0 - 150.0}) {
        RotaryRows rows;
        std::vector<double> positions = explicit_positions;
        if (first < 0) {
          rows.count = static_cast<std::int64_t>(positions.size());
          rows.positions = positions.data();
        } else {
          rows.count = 150;
          rows.first_position = first;
          positions.resize(static_cast<std::size_t>(rows.count));
          for (std::int64_t r = 0; r < rows.count; ++r)
            positions[static_cast<std::size_t>(r)] = first + static_cast<double>(r);
        }
        std::vector<float> c(rows.count * rd), s(rows.count * rd);
        REQUIRE(rot.cos_sin(rows, c.data(), s.data(), c.size(), s.size()).ok());
        for (std::int64_t r = 0; r < rows.count; ++r) {
          const double p = positions[static_cast<std::size_t>(r)];
          for (std::int64_t i = 0; i < n; ++i) {
            const auto u = static_cast<std::size_t>(i);
            const oracle::Rounded want_c = oracle::rounded_sin_cos(p, w[u], true);
            const oracle::Rounded want_s = oracle::rounded_sin_cos(p, w[u], false);
            ties += want_c.tie + want_s.tie;
            for (int which = 0; which < 2; ++which) {
              const float gc = c[r * rd + column(layout, n, i, which)];
              const float gs = s[r * rd + column(layout, n, i, which)];
              INFO("rd " << rd << " p " << p << " i " << i);
              CHECK(oracle::acceptable(gc, want_c));
              CHECK(oracle::acceptable(gs, want_s));
              values += 2;
            }
          }
        }
      }
    }
  }
  INFO(values << " values, " << ties << " ties");
  CHECK(values > 50000);
}

TEST_CASE("rotary apply: within 2^-22 x A x |pair| of the float64 rotation", "[rotary]") {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  struct Case {
    std::int64_t head_dim, rotary_dim, heads;
  };
  for (RotaryLayout layout : {RotaryLayout::half, RotaryLayout::interleaved}) {
    for (Case k : {Case{128, 128, 4}, Case{64, 64, 3}, Case{10, 6, 5}, Case{130, 128, 2},
                   Case{2, 2, 1}, Case{96, 24, 2}, Case{36, 36, 1}}) {
      RotarySpec spec = explicit_spec(k.head_dim, k.rotary_dim, layout);
      for (int scaled = 0; scaled < 2; ++scaled) {
        if (scaled) {
          spec.scaling.type = RopeScalingType::yarn;
          spec.scaling.factor = 8.0;
          spec.scaling.original_max_positions = 4096;
        }
        const RotaryEmbedding rot = make(spec);
        const std::vector<double>& w = rot.inverse_frequencies();
        const double a = rot.attention_scaling();
        const std::vector<double> positions = test_positions();
        RotaryRows rows;
        rows.count = static_cast<std::int64_t>(positions.size());
        rows.positions = positions.data();
        std::vector<float> x(rows.count * k.heads * k.head_dim);
        for (float& v : x)
          v = u(rng);
        std::vector<float> y = x;
        REQUIRE(rot.apply(rows, k.heads, y.data(), y.size()).ok());
        const std::int64_t n = k.rotary_dim / 2;
        double worst = 0;
        for (std::int64_t r = 0; r < rows.count; ++r) {
          for (std::int64_t h = 0; h < k.heads; ++h) {
            const std::int64_t base = (r * k.heads + h) * k.head_dim;
            for (std::int64_t i = 0; i < n; ++i) {
              const std::int64_t i0 = layout == RotaryLayout::half ? i : 2 * i;
              const std::int64_t i1 = layout == RotaryLayout::half ? i + n : 2 * i + 1;
              double ox, oy;
              rotate_f64(x[base + i0], x[base + i1], positions[r], w[i], a, &ox, &oy);
              const double norm =
                  std::hypot(static_cast<double>(x[base + i0]), static_cast<double>(x[base + i1]));
              const double e = std::max(std::fabs(y[base + i0] - ox), std::fabs(y[base + i1] - oy));
              INFO("layout " << static_cast<int>(layout) << " hd " << k.head_dim << " p "
                             << positions[r] << " i " << i);
              CHECK(e <= kBound * a * norm);
              worst = std::max(worst, e / (a * norm));
            }
            for (std::int64_t c = k.rotary_dim; c < k.head_dim; ++c)
              CHECK(y[base + c] == x[base + c]);  // partial rotary: untouched
          }
        }
        CHECK(worst > 0);
      }
    }
  }
}

TEST_CASE("rotary: one row, chunks and explicit positions equal the bulk call bit for bit",
          "[rotary]") {
  for (RotaryLayout layout : {RotaryLayout::half, RotaryLayout::interleaved}) {
    const RotaryEmbedding rot = make(explicit_spec(64, 64, layout, 500000.0));
    const std::int64_t heads = 4, len = 300, hd = 64;
    std::vector<float> x(len * heads * hd);
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(-1, 1);
    for (float& v : x)
      v = u(rng);
    RotaryRows all;
    all.count = len;
    all.first_position = 4000;
    std::vector<float> bulk = x;
    REQUIRE(rot.apply(all, heads, bulk.data(), bulk.size()).ok());
    std::vector<float> single = x;
    for (std::int64_t r = 0; r < len; ++r) {
      RotaryRows one;
      one.count = 1;
      one.first_position = 4000 + static_cast<double>(r);
      REQUIRE(rot.apply(one, heads, single.data() + r * heads * hd, heads * hd).ok());
    }
    CHECK(single == bulk);
    // The same one row at a time through an anchor cache (shared with another embedding between
    // calls, which must refill it): the same bits.
    RotaryAnchorCache cache;
    const RotaryEmbedding other = make(explicit_spec(64, 64, layout, 10000.0));
    std::vector<float> cached_rows = x, scratch(heads * hd, 0.5f);
    for (std::int64_t r = 0; r < len; ++r) {
      RotaryRows one;
      one.count = 1;
      one.first_position = 4000 + static_cast<double>(r);
      REQUIRE(rot.apply(one, heads, cached_rows.data() + r * heads * hd, heads * hd, &cache).ok());
      if (r % 50 == 7) REQUIRE(other.apply(one, heads, scratch.data(), heads * hd, &cache).ok());
    }
    CHECK(cached_rows == bulk);
    std::vector<double> positions(len);
    for (std::int64_t r = 0; r < len; ++r)
      positions[r] = 4000 + static_cast<double>(r);
    std::vector<float> explicit_rows = x;
    RotaryRows ex;
    ex.count = len;
    ex.positions = positions.data();
    REQUIRE(rot.apply(ex, heads, explicit_rows.data(), explicit_rows.size()).ok());
    CHECK(explicit_rows == bulk);
    // cos_sin in chunks of 7 rows equals one call
    std::vector<float> c(len * hd), s(len * hd), c2(len * hd), s2(len * hd);
    REQUIRE(rot.cos_sin(all, c.data(), s.data(), c.size(), s.size()).ok());
    for (std::int64_t r = 0; r < len; r += 7) {
      RotaryRows chunk;
      chunk.count = std::min<std::int64_t>(7, len - r);
      chunk.first_position = 4000 + static_cast<double>(r);
      const std::size_t m = static_cast<std::size_t>(chunk.count * hd);
      REQUIRE(rot.cos_sin(chunk, c2.data() + r * hd, s2.data() + r * hd, m, m).ok());
    }
    CHECK(c2 == c);
    CHECK(s2 == s);
  }
}

TEST_CASE("rotary: an anchor cache shared by real and float64 frequencies with the same heads",
          "[rotary]") {
  // headDim 4, base 10000: the real frequencies (explicit options, no scaling) are {1, 0.01} with a
  // tail on 0.01; 'linear' with factor 1 gives HF's float64 chain, the same two heads and no tail.
  const RotaryEmbedding real = make(explicit_spec(4, 4, RotaryLayout::half));
  RotarySpec chain_spec = explicit_spec(4, 4, RotaryLayout::half);
  chain_spec.scaling.type = RopeScalingType::linear;
  chain_spec.scaling.factor = 1.0;
  const RotaryEmbedding chain = make(chain_spec);
  REQUIRE(real.inverse_frequencies() == chain.inverse_frequencies());
  auto row = [](const RotaryEmbedding& rot, double p, RotaryAnchorCache* cache) {
    RotaryRows one;
    one.count = 1;
    one.first_position = p;
    std::vector<float> c(4), s(4);
    REQUIRE(rot.cos_sin(one, c.data(), s.data(), c.size(), s.size(), cache).ok());
    c.insert(c.end(), s.begin(), s.end());
    return c;
  };
  // Positions near 2^24 where the tail changes a value (about 1 in 500).
  std::vector<double> differ;
  for (double p = 16777215.0; p > 16777215.0 - 60000 && differ.size() < 12; --p)
    if (row(real, p, nullptr) != row(chain, p, nullptr)) differ.push_back(p);
  REQUIRE(differ.size() == 12);
  RotaryAnchorCache cache;
  for (double p : differ) {
    // The real set fills the cache with its anchor, then the float64 set asks for the same block.
    CHECK(row(real, p, &cache) == row(real, p, nullptr));
    CHECK(row(chain, p, &cache) == row(chain, p, nullptr));
    CHECK(row(real, p, &cache) == row(real, p, nullptr));
  }
}

TEST_CASE("rotary cos_sin: the block path of an offset equals the per-row path bit for bit",
          "[rotary]") {
  // cos_sin with an offset (consecutive integer positions) is written block by block
  // (cos_sin_blocks); with explicit positions, row by row (for_each_row). Both must give the same
  // bits at any offset up to 2^24 - 1, in both layouts, for partial rotary, odd pair counts and a
  // float32 attention factor.
  std::mt19937 rng(29);
  std::uniform_int_distribution<std::int64_t> u(0, (1 << 24) - 1 - 100);
  for (RotaryLayout layout : {RotaryLayout::half, RotaryLayout::interleaved}) {
    for (std::int64_t rd : {2, 6, 10, 64, 96, 128}) {
      for (bool yarn : {false, true}) {
        RotarySpec spec = explicit_spec(rd + 4, rd, layout, rd == 96 ? 500000.0 : 10000.0);
        if (yarn) {
          spec.scaling.type = RopeScalingType::yarn;
          spec.scaling.factor = 4.0;
          spec.scaling.original_max_positions = 1 << 25;  // one frequency set at every offset
        }
        const RotaryEmbedding rot = make(spec);
        for (int t = 0; t < 6; ++t) {
          const double first = t == 0 ? 0.0 : t == 1 ? 31.0 : static_cast<double>(u(rng));
          const std::int64_t len = 1 + static_cast<std::int64_t>(u(rng) % 100);
          RotaryRows blocks;
          blocks.count = len;
          blocks.first_position = first;
          std::vector<double> positions(static_cast<std::size_t>(len));
          for (std::int64_t r = 0; r < len; ++r)
            positions[r] = first + static_cast<double>(r);
          RotaryRows rows;
          rows.count = len;
          rows.positions = positions.data();
          const std::size_t m = static_cast<std::size_t>(len * rd);
          std::vector<float> c1(m), s1(m), c2(m, 7.0f), s2(m, 7.0f);
          REQUIRE(rot.cos_sin(rows, c1.data(), s1.data(), m, m).ok());
          REQUIRE(rot.cos_sin(blocks, c2.data(), s2.data(), m, m).ok());
          INFO("rotary_dim " << rd << " first " << first << " length " << len);
          CHECK(c1 == c2);
          CHECK(s1 == s2);
        }
      }
    }
  }
}

TEST_CASE("rotary cos_sin applies the attention factor as HF does (float32 product)", "[rotary]") {
  RotarySpec spec = explicit_spec(64, 64, RotaryLayout::half);
  spec.scaling.type = RopeScalingType::yarn;
  spec.scaling.factor = 4.0;
  spec.scaling.original_max_positions = 2048;
  const RotaryEmbedding rot = make(spec);
  const double a = rot.attention_scaling();
  CHECK(a == Approx(0.1 * std::log(4.0) + 1.0).epsilon(1e-15));
  RotaryRows rows;
  rows.count = 50;
  rows.first_position = 1000;
  std::vector<float> c(50 * 64), s(50 * 64);
  REQUIRE(rot.cos_sin(rows, c.data(), s.data(), c.size(), s.size()).ok());
  std::int64_t differ = 0;
  for (std::int64_t r = 0; r < 50; ++r)
    for (std::int64_t i = 0; i < 32; ++i) {
      const double cv = cos_exact(1000.0 + static_cast<double>(r), rot.inverse_frequencies()[i]);
      const float want = static_cast<float>(cv) * static_cast<float>(a);
      differ += c[r * 64 + i] != want;
      CHECK(std::fabs(c[r * 64 + i] - a * cv) <= kBound * a);
    }
  CHECK(differ <= 2);
}

TEST_CASE("rotary dynamic and longrope pick frequencies from the sequence length", "[rotary]") {
  RotarySpec spec = explicit_spec(32, 32, RotaryLayout::half);
  spec.scaling.type = RopeScalingType::dynamic;
  spec.scaling.factor = 2.0;
  spec.scaling.original_max_positions = 100;
  const RotaryEmbedding rot = make(spec);
  std::vector<double> inv;
  double a = 0;
  REQUIRE(rotary_frequencies(rot.spec(), 300, &inv, &a).ok());
  // base' = base * (2 * 300 / 100 - 1)^(32 / 30)
  const double base2 = 10000.0 * std::pow(5.0, 32.0 / 30.0);
  for (std::size_t i = 0; i < inv.size(); ++i)
    CHECK(inv[i] == Approx(std::pow(base2, -2.0 * static_cast<double>(i) / 32)).epsilon(1e-13));
  // A call whose rows end at position 299 uses those frequencies; rows.sequence_length can say so
  // for a chunk that ends earlier.
  std::vector<float> c1(32), s1(32), c2(32), s2(32);
  RotaryRows one;
  one.count = 1;
  one.first_position = 299;
  REQUIRE(rot.cos_sin(one, c1.data(), s1.data(), 32, 32).ok());
  RotaryRows chunk;
  chunk.count = 1;
  chunk.first_position = 299;
  chunk.sequence_length = 300;
  REQUIRE(rot.cos_sin(chunk, c2.data(), s2.data(), 32, 32).ok());
  CHECK(c1 == c2);
  CHECK(std::fabs(c1[1] - std::cos(299 * inv[1])) <= kBound);
  // Below the original context: the unscaled frequencies.
  chunk.sequence_length = 100;
  REQUIRE(rot.cos_sin(chunk, c2.data(), s2.data(), 32, 32).ok());
  CHECK(std::fabs(c2[1] - std::cos(299 * rot.inverse_frequencies()[1])) <= kBound);
}

TEST_CASE("rotary float64 frequencies of explicit options", "[rotary]") {
  for (double base : {10000.0, 500000.0, 1e6, 1.5}) {
    RotarySpec spec = explicit_spec(128, 128, RotaryLayout::half, base);
    std::vector<double> inv;
    double a;
    REQUIRE(rotary_frequencies(spec, 0, &inv, &a).ok());
    REQUIRE(inv.size() == 64);
    for (std::size_t i = 0; i < 64; ++i)
      CHECK(inv[i] == Approx(std::pow(base, -2.0 * static_cast<double>(i) / 128)).epsilon(1e-15));
    spec.scaling.type = RopeScalingType::linear;
    spec.scaling.factor = 4;
    std::vector<double> lin;
    REQUIRE(rotary_frequencies(spec, 0, &lin, &a).ok());
    // Scaling rules keep HF's float64 chain 1.0 / base ** (2i / d), then / factor; without
    // scaling the heads are the doubles nearest to base^(-2i/d), which may differ by an ulp.
    for (std::size_t i = 0; i < 64; ++i) {
      const double chain = 1.0 / std::pow(base, static_cast<double>(2 * i) / 128.0);
      CHECK(lin[i] == Approx(chain / 4).epsilon(1e-15));
      CHECK(std::fabs(inv[i] - chain) <= chain * 0x1p-52);
    }
  }
}

TEST_CASE("rotary positions beyond 2^24 and up to 2^31 - 1 stay bounded", "[rotary]") {
  RotarySpec spec = explicit_spec(16, 16, RotaryLayout::half);
  const RotaryEmbedding rot = make(spec);
  for (double p : {16777216.0, 1e9, 2147483647.0}) {
    RotaryRows rows;
    rows.count = 1;
    rows.first_position = p;
    std::vector<float> c(16), s(16);
    REQUIRE(rot.cos_sin(rows, c.data(), s.data(), 16, 16).ok());
    for (std::int64_t i = 0; i < 8; ++i) {
      CHECK(std::fabs(c[i] - std::cos(p * rot.inverse_frequencies()[i])) <= 1e-6);
      CHECK(std::fabs(c[i]) <= 1.0f);
    }
  }
}

TEST_CASE("rotary angles beyond 2^31 are reduced modulo 2 pi in double-double", "[rotary]") {
  // longrope with a tiny short factor: w_0 = 1 / 0.001 = 1000, so p w reaches 2^41.
  RotarySpec spec = explicit_spec(4, 4, RotaryLayout::half);
  spec.scaling.type = RopeScalingType::longrope;
  spec.scaling.original_max_positions = 2147483648.0;  // every call uses the short factors
  spec.scaling.short_factor = {0.001, 1.0};
  spec.scaling.long_factor = {1.0, 1.0};
  const RotaryEmbedding rot = make(spec);
  const double w0 = rot.inverse_frequencies()[0];
  CHECK(w0 == Approx(1000.0));
  for (double p : {3e6, 1e7, 123456789.0, 2147483647.0}) {
    RotaryRows rows;
    rows.count = 1;
    rows.first_position = p;
    std::vector<float> c(4), s(4);
    REQUIRE(rot.cos_sin(rows, c.data(), s.data(), 4, 4).ok());
    INFO("p " << p << " angle " << p * w0);
    // The float64 angle p * w0 (not exact here: within 2^-11 of p w0 at 2^41) is the reference.
    CHECK(std::fabs(c[0] - cos_exact(p, w0)) <= 1e-3);
    CHECK(std::fabs(s[0] - sin_exact(p, w0)) <= 1e-3);
    CHECK(std::fabs(c[0] - std::cos(p * w0)) <= 1e-6);
  }
}

TEST_CASE(
    "vision 2D RoPE: HF's float32 frequencies restart per axis (Qwen-VL) or split even / odd "
    "(Pixtral)",
    "[rotary]") {
  for (const VisionRope rule : {VisionRope::qwen, VisionRope::pixtral}) {
    RotarySpec spec;
    spec.head_dim = 80;
    spec.base = 10000;
    spec.vision = rule;
    spec.arithmetic = FrequencyArithmetic::hf_float32;
    spec.mrope_section = {0, 20, 20};
    std::vector<double> w;
    double attention = 0;
    REQUIRE(rotary_frequencies(spec, 0, &w, &attention).ok());
    REQUIRE(w.size() == 40);
    CHECK(attention == 1.0);
    // The plain chain over the dim the model's rotary embedding is given (40 or 80).
    RotarySpec plain;
    plain.head_dim = rule == VisionRope::qwen ? 40 : 80;
    plain.base = 10000;
    plain.arithmetic = FrequencyArithmetic::hf_float32;
    std::vector<double> f;
    REQUIRE(rotary_frequencies(plain, 0, &f, &attention).ok());
    for (std::size_t k = 0; k < 20; ++k) {
      CHECK(w[k] == (rule == VisionRope::qwen ? f[k] : f[2 * k]));
      CHECK(w[20 + k] == (rule == VisionRope::qwen ? f[k] : f[2 * k + 1]));
    }
    // Frequency i turns by row h (1) below 20, by w (2) from 20.
    CHECK(mrope_row(spec, 19) == 1);
    CHECK(mrope_row(spec, 20) == 2);
    spec.head_dim = 78;
    spec.mrope_section = {0, 19, 20};
    CHECK(validate(spec).argument == "headDim");
  }
}

TEST_CASE("multimodal rows: each column is the one-row table's value at its row's position",
          "[rotary]") {
  // The multimodal path builds a table per position row (over the range of integer positions it
  // spans, or one row per row) and gathers columns from it: every value must be the bits of the
  // plain table at that position, on both paths, in both layouts, with interleaved sections.
  struct Case {
    const char* name;
    std::array<std::int64_t, 3> section;
    bool interleaved;
    RotaryLayout layout;
  };
  const Case cases[] = {{"qwen2-vl", {16, 24, 24}, false, RotaryLayout::half},
                        {"qwen3-vl", {24, 20, 20}, true, RotaryLayout::half},
                        {"interleaved pairs", {8, 12, 12}, false, RotaryLayout::interleaved},
                        {"vision", {0, 20, 20}, false, RotaryLayout::half}};
  for (const Case& c : cases) {
    RotarySpec spec;
    spec.head_dim = 2 * (c.section[0] + c.section[1] + c.section[2]);
    spec.base = 1e6;
    spec.layout = c.layout;
    spec.arithmetic = FrequencyArithmetic::hf_float32;
    spec.mrope_section = c.section;
    spec.mrope_interleaved = c.interleaved;
    RotaryEmbedding mm;
    REQUIRE(mm.init(spec).ok());
    RotarySpec flat = spec;
    flat.mrope_section = {0, 0, 0};
    flat.mrope_interleaved = false;
    RotaryEmbedding one;
    REQUIRE(one.init(flat).ok());
    const std::int64_t rd = spec.head_dim, count = 150;
    // Patterns: an image grid (ranges), text then image then text (t jumps), sparse t (a video's
    // seconds: no range), fractional positions, a lone large position.
    for (int pattern = 0; pattern < 5; ++pattern) {
      INFO(c.name << " pattern " << pattern);
      std::vector<double> p(static_cast<std::size_t>(3 * count));
      for (std::int64_t r = 0; r < count; ++r) {
        double t = 0, h = 0, w = 0;
        if (pattern == 0) {
          h = static_cast<double>(r / 10), w = static_cast<double>(r % 10);
        } else if (pattern == 1) {
          const bool image = r >= 40 && r < 100;
          t = image ? 40 : (r < 40 ? r : r - 50);
          h = image ? 40 + (r - 40) / 6 : t;
          w = image ? 40 + (r - 40) % 6 : t;
        } else if (pattern == 2) {
          t = static_cast<double>(1000 * (r / 30)), h = static_cast<double>(r % 30 / 5),
          w = static_cast<double>(r % 5);
        } else if (pattern == 3) {
          t = 0.5 * static_cast<double>(r), h = 0.25 * static_cast<double>(r), w = 3.75;
        } else {
          t = h = w = static_cast<double>(r);
          if (r == 77) t = 2147483000.0;
        }
        p[r] = t, p[count + r] = h, p[2 * count + r] = w;
      }
      RotaryRows rows;
      rows.count = count;
      rows.mrope_positions = p.data();
      const std::size_t n = static_cast<std::size_t>(count * rd);
      std::vector<float> cos(n), sin(n);
      REQUIRE(mm.cos_sin(rows, cos.data(), sin.data(), n, n).ok());
      // The plain table at each of the three rows' positions.
      std::vector<float> pc[3], ps[3];
      for (int k = 0; k < 3; ++k) {
        RotaryRows plain;
        plain.count = count;
        plain.positions = p.data() + k * count;
        plain.sequence_length = rows.sequence_length;
        pc[k].resize(n);
        ps[k].resize(n);
        REQUIRE(one.cos_sin(plain, pc[k].data(), ps[k].data(), n, n).ok());
      }
      std::int64_t wrong = 0;
      for (std::int64_t r = 0; r < count; ++r) {
        for (std::int64_t j = 0; j < rd; ++j) {
          const std::int64_t pair = c.layout == RotaryLayout::interleaved ? j / 2 : j % (rd / 2);
          const int k = mrope_row(spec, pair);
          const std::size_t i = static_cast<std::size_t>(r * rd + j);
          wrong += cos[i] != pc[k][i] || sin[i] != ps[k][i];
        }
      }
      CHECK(wrong == 0);
      // apply rotates by those values: x = (1, 0) pairs give back cos and sin (the half layout's
      // first and second halves; interleaved, even and odd channels).
      const std::int64_t heads = 3;
      std::vector<float> x(static_cast<std::size_t>(count * heads * rd), 0.0f);
      for (std::int64_t r = 0; r < count * heads; ++r)
        for (std::int64_t i = 0; i < rd / 2; ++i)
          x[r * rd + (c.layout == RotaryLayout::interleaved ? 2 * i : i)] = 1.0f;
      REQUIRE(mm.apply(rows, heads, x.data(), x.size()).ok());
      std::int64_t off = 0;
      for (std::int64_t r = 0; r < count; ++r) {
        for (std::int64_t hh = 0; hh < heads; ++hh) {
          for (std::int64_t i = 0; i < rd / 2; ++i) {
            const bool il = c.layout == RotaryLayout::interleaved;
            const std::size_t at = static_cast<std::size_t>((r * heads + hh) * rd);
            const std::size_t col = static_cast<std::size_t>(r * rd + (il ? 2 * i : i));
            const float xc = x[at + static_cast<std::size_t>(il ? 2 * i : i)];
            const float xs = x[at + static_cast<std::size_t>(il ? 2 * i + 1 : i + rd / 2)];
            off += std::fabs(xc - cos[col]) > 1e-7f || std::fabs(xs - sin[col]) > 1e-7f;
          }
        }
      }
      CHECK(off == 0);
    }
  }
}
