// ALiBi: the paper's slopes (powers of 2 and its rule for other head counts), the bias tensor in
// both modes and offsets against a direct float64 computation, chunks equal to one call, and every
// bad argument named.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "posenc/posenc.hpp"

using namespace posenc;

namespace {

std::vector<double> slopes_of(std::int64_t n) {
  std::vector<double> m(static_cast<std::size_t>(n));
  REQUIRE(alibi_slopes(n, m.data(), m.size()).ok());
  return m;
}

}  // namespace

TEST_CASE("ALiBi slopes follow get_slopes", "[alibi]") {
  const std::vector<double> m8 = slopes_of(8);
  for (int i = 0; i < 8; ++i)
    CHECK(m8[i] == std::ldexp(1.0, -(i + 1)));  // 1/2, 1/4, ..., 1/256 exactly
  const std::vector<double> m16 = slopes_of(16);
  for (int i = 0; i < 16; ++i)
    CHECK(m16[i] == Approx(std::pow(2.0, -0.5 * (i + 1))).epsilon(1e-15));
  // 12 heads: the 8 slopes of 8, then slopes(16)[0], [2], [4], [6]
  const std::vector<double> m12 = slopes_of(12);
  for (int i = 0; i < 8; ++i)
    CHECK(m12[i] == m8[i]);
  for (int i = 0; i < 4; ++i)
    CHECK(m12[8 + i] == m16[2 * i]);
  // Every count up to 200: the rule, recursively (n = 24: 16 + every other of 32, ...)
  for (std::int64_t n = 1; n <= 200; ++n) {
    const std::vector<double> m = slopes_of(n);
    std::int64_t p = 1;
    while (p * 2 <= n)
      p *= 2;
    const double start = std::pow(2.0, -8.0 / static_cast<double>(p));
    INFO("n " << n);
    for (std::int64_t i = 0; i < p; ++i)
      CHECK(m[i] == Approx(std::pow(start, static_cast<double>(i + 1))).epsilon(1e-14));
    if (p != n) {
      const std::vector<double> twice = slopes_of(2 * p);
      for (std::int64_t i = 0; i < n - p; ++i)
        CHECK(m[p + i] == twice[2 * i]);
    }
  }
}

TEST_CASE("ALiBi bias: causal and symmetric, offsets, chunks", "[alibi]") {
  for (AlibiMode mode : {AlibiMode::causal, AlibiMode::symmetric}) {
    for (std::int64_t offset : {0, 3, 100}) {
      for (auto qk : {std::pair<std::int64_t, std::int64_t>{5, 7}, {1, 104}, {9, 3}, {16, 16}}) {
        AlibiSpec s;
        s.heads = 6;
        s.query_length = qk.first;
        s.key_length = qk.second;
        s.mode = mode;
        s.offset = offset;
        const std::int64_t total = s.heads * s.query_length * s.key_length;
        std::vector<float> out(total);
        REQUIRE(alibi_bias(s, out.data(), out.size()).ok());
        const std::vector<double> m = slopes_of(s.heads);
        for (std::int64_t h = 0; h < s.heads; ++h)
          for (std::int64_t i = 0; i < s.query_length; ++i)
            for (std::int64_t j = 0; j < s.key_length; ++j) {
              const std::int64_t d = offset + i - j;
              const float got = out[(h * s.query_length + i) * s.key_length + j];
              INFO("mode " << static_cast<int>(mode) << " h " << h << " i " << i << " j " << j);
              if (mode == AlibiMode::causal && d < 0) {
                CHECK(got == -std::numeric_limits<float>::infinity());
              } else {
                CHECK(got == static_cast<float>(-(m[h] * static_cast<double>(d < 0 ? -d : d))));
              }
            }
        // chunks of 4 rows (crossing heads) equal the one call
        std::vector<float> chunked(total);
        const std::int64_t rows = s.heads * s.query_length;
        for (std::int64_t r = 0; r < rows; r += 4) {
          const std::int64_t count = rows - r < 4 ? rows - r : 4;
          REQUIRE(alibi_bias_rows(s, r, count, chunked.data() + r * s.key_length,
                                  static_cast<std::size_t>(count * s.key_length))
                      .ok());
        }
        CHECK(chunked == out);
      }
    }
  }
}

TEST_CASE("ALiBi errors name the argument", "[alibi][bad]") {
  double m[4];
  CHECK(alibi_slopes(0, m, 0).argument == "heads");
  CHECK(alibi_slopes(65537, m, 4).argument == "heads");
  CHECK(alibi_slopes(4, m, 3).argument == "out");
  AlibiSpec s;
  s.heads = 2;
  s.query_length = 3;
  s.key_length = 4;
  std::vector<float> out(24, 7.0f);
  AlibiSpec b = s;
  b.heads = 0;
  CHECK(alibi_bias(b, out.data(), 24).argument == "heads");
  b = s;
  b.query_length = 0;
  CHECK(alibi_bias(b, out.data(), 24).argument == "queryLength");
  b = s;
  b.key_length = -1;
  CHECK(alibi_bias(b, out.data(), 24).argument == "keyLength");
  b = s;
  b.key_length = 1 << 30;
  CHECK(alibi_bias(b, out.data(), 24).argument == "keyLength");
  b = s;
  b.offset = -1;
  CHECK(alibi_bias(b, out.data(), 24).argument == "offset");
  b = s;
  b.mode = static_cast<AlibiMode>(5);
  CHECK(alibi_bias(b, out.data(), 24).argument == "mode");
  CHECK(alibi_bias(s, out.data(), 23).argument == "out");
  CHECK(alibi_bias_rows(s, 6, 1, out.data(), 4).argument == "firstRow");
  CHECK(alibi_bias_rows(s, 5, 2, out.data(), 8).argument == "rowCount");
  for (float v : out)
    CHECK(v == 7.0f);
}
