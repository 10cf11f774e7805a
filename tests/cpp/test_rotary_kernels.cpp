// The rotary internals: correctly rounded float32 pow (against x87 powl natively, and its
// double-double decision everywhere), and the float64 row and rotation kernels: the wasm SIMD
// twins (natively through simde) bit-identical to the scalar ones.
#if !defined(__wasm_simd128__) && defined(__has_include) && !defined(__EMSCRIPTEN__)
#if __has_include(<simde/wasm/simd128.h>)
#define POSENC_SIMD_VIA_SIMDE 1  // before the kernels: their simd namespace through simde
#endif
#endif

#include <catch2/catch.hpp>
#include <cfloat>
#include <cmath>
#include <random>
#include <vector>

#include "rotary/kernels.hpp"
#include "sincos/float32_chain.hpp"
#if defined(__wasm_simd128__) || defined(POSENC_SIMD_VIA_SIMDE)
#define POSENC_TEST_ROTARY_SIMD 1
#endif

namespace pd = posenc::detail;

TEST_CASE("pow_exceeds decides b^e against numbers 2^-35..2^-45 away", "[rotary][pow]") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> ub(1.0001, 2e6), ue(0.0, 2.0);
  for (int t = 0; t < 2000; ++t) {
    const double b = ub(rng), e = ue(rng);
    const double d = std::pow(b, e);
    for (double delta : {0x1p-35, -0x1p-35, 0x1p-45, -0x1p-45}) {
      bool tie = true;
      INFO("b " << b << " e " << e << " delta " << delta);
      CHECK(pd::pow_exceeds(b, e, d * (1 + delta), &tie) == (delta < 0));
      CHECK_FALSE(tie);
    }
  }
}

#if LDBL_MANT_DIG == 64
// The float32 rounding of powl when it is unambiguous (powl is within ~2^-63 relative).
static bool powl_f32(float b, float e, float* out) {
  const long double v = std::pow(static_cast<long double>(b), static_cast<long double>(e));
  const float f = static_cast<float>(v);
  const float other = v > f ? std::nextafter(f, 3e38f) : std::nextafter(f, 0.0f);
  const long double mid = (static_cast<long double>(f) + other) / 2;
  *out = f;
  return std::fabs(v - mid) > std::ldexp(v, -58);
}

TEST_CASE("pow_f32 is the correctly rounded float32 pow (x87 powl reference)", "[rotary][pow]") {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> ub(1.001f, 2e6f), ue(0.0f, 2.0f);
  int checked = 0, near_midpoint = 0;
  for (int t = 0; t < 3000000; ++t) {
    const float b = ub(rng), e = ue(rng);
    const double d = std::pow(static_cast<double>(b), static_cast<double>(e));
    const float f = static_cast<float>(d);
    const float lo = static_cast<double>(f) < d ? f : std::nextafter(f, 0.0f);
    const float hi = static_cast<double>(f) < d ? std::nextafter(f, 3e38f) : f;
    const double mid = 0.5 * (static_cast<double>(lo) + hi);
    const bool hard = std::fabs(d - mid) <= std::ldexp(d, -44);
    if (!hard && t % 100 != 0) continue;  // every hard case, and 1% of the others
    float want;
    if (!powl_f32(b, e, &want)) continue;
    INFO("b " << b << " e " << e);
    CHECK(pd::pow_f32(b, e) == want);
    ++checked;
    near_midpoint += hard;
  }
  CHECK(checked > 20000);
  CHECK(near_midpoint > 0);
  // The frequency chains' own arguments: every base^(2i/d) of common bases and dims.
  for (float base : {10000.0f, 500000.0f, 1000000.0f, 10000.5f, 75000.0f}) {
    for (int d = 2; d <= 1024; d += 2) {
      for (int i = 0; i < d / 2; ++i) {
        const float e = static_cast<float>(2.0 * i / d);
        float want;
        if (!powl_f32(base, e, &want)) continue;
        INFO("base " << base << " d " << d << " i " << i);
        REQUIRE(pd::pow_f32(base, e) == want);
      }
    }
  }
}
#endif

TEST_CASE("pow_f32 exact cases", "[rotary][pow]") {
  CHECK(pd::pow_f32(4097.0f, 2.0f) == static_cast<float>(4097.0 * 4097.0));  // a tie, to even
  CHECK(pd::pow_f32(257.0f, 3.0f) == static_cast<float>(257.0 * 257.0 * 257.0));
  CHECK(pd::pow_f32(66049.0f, 1.5f) == 16974592.0f);  // 257^3 = 16974593: a tie, to even
  CHECK(pd::pow_f32(10000.0f, 0.0f) == 1.0f);
  CHECK(pd::pow_f32(2.0f, 0.5f) == static_cast<float>(std::sqrt(2.0)));
}

#if POSENC_TEST_ROTARY_SIMD
TEST_CASE("rotary SIMD kernels equal the scalar kernels bit for bit", "[rotary][kernels]") {
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> uw(1e-9, 1.0);
  std::uniform_real_distribution<float> ux(-3.0f, 3.0f);
  for (std::int64_t n : {4, 8, 12, 64, 100}) {
    std::vector<double> w(n), lo(n), s1(n), c1(n), s2(n), c2(n), sd(n), cd(n);
    for (std::size_t i = 0; i < w.size(); ++i) {
      w[i] = uw(rng);
      lo[i] = w[i] * (uw(rng) - 0.5) * 0x1p-53;  // a real frequency's tail (explicit options)
    }
    const pd::SplitFrequencies F{w.data(), lo.data()};
    for (double p : {0.0, 1.0, 4095.0, 4096.0, 1048579.0, 16777215.0, 123.5}) {
      pd::scalar::sincos_f64(F, n, p, s1.data(), c1.data());
      pd::simd::sincos_f64(F, n, p, s2.data(), c2.data());
      CHECK(s1 == s2);
      CHECK(c1 == c2);
      pd::scalar::sincos_f64(F, n, 17.0, sd.data(), cd.data());
      std::vector<float> fs1(n), fc1(n), fs2(n), fc2(n);
      for (double scale : {1.0, 1.2079441541679836}) {
        pd::scalar::rotate_to_f32(s1.data(), c1.data(), sd.data(), cd.data(), n, scale, fs1.data(),
                                  fc1.data());
        pd::simd::rotate_to_f32(s1.data(), c1.data(), sd.data(), cd.data(), n, scale, fs2.data(),
                                fc2.data());
        CHECK(fs1 == fs2);
        CHECK(fc1 == fc2);
      }
    }
  }
  // The two-chain anchor kernel and the cos_sin block kernel.
  for (std::int64_t np : {4, 8, 32, 64, 68}) {
    std::vector<double> w(np), lo(np), s1(np), c1(np), s2(np), c2(np);
    for (std::size_t i = 0; i < w.size(); ++i) {
      w[i] = uw(rng);
      lo[i] = np % 8 == 0 ? w[i] * (uw(rng) - 0.5) * 0x1p-53 : 0.0;  // with and without tails
    }
    const pd::SplitFrequencies F{w.data(), lo.data()};
    for (double p : {0.0, 32.0, 4096.0, 16777184.0, 1048576.0}) {
      pd::scalar::sincos_f64(F, np, p, s1.data(), c1.data());
      pd::simd::sincos_f64_two_pass(F, np, p, s2.data(), c2.data());
      CHECK(s1 == s2);
      CHECK(c1 == c2);
    }
    std::vector<double> step_s(32 * np), step_c(32 * np);
    for (std::int64_t e = 0; e < 32; ++e)
      pd::scalar::sincos_f64(F, np, static_cast<double>(e), step_s.data() + e * np,
                             step_c.data() + e * np);
    pd::scalar::sincos_f64(F, np, 4096.0, s1.data(), c1.data());
    for (std::int64_t n : {np, np - 1}) {
      for (bool half : {true, false}) {
        for (float scale : {1.0f, 1.1386294f}) {
          pd::scalar::CosSinBlock B;
          B.sa = s1.data();
          B.ca = c1.data();
          B.step_s = step_s.data();
          B.step_c = step_c.data();
          B.np = np;
          B.n = n;
          B.scale = scale;
          B.half = half;
          B.anchor = 4096.0;  // the anchor's sines and cosines are s1, c1 (position 4096)
          B.F = F;            // the hard cases' frequencies
          const std::int64_t stride = 2 * n + 3;
          std::vector<float> ca(32 * stride, 5.0f), sa(ca), cb(ca), sb(ca);
          pd::scalar::cos_sin_block(B, 3, 32, ca.data(), sa.data(), stride);
          pd::simd::cos_sin_block(B, 3, 32, cb.data(), sb.data(), stride);
          CHECK(ca == cb);
          CHECK(sa == sb);
          // against rotate_to_f32, row by row
          std::vector<float> fs(np), fc(np);
          for (std::int64_t e = 3; e < 32; ++e) {
            pd::scalar::rotate_to_f32(s1.data(), c1.data(), step_s.data() + e * np,
                                      step_c.data() + e * np, np, 1.0, fs.data(), fc.data());
            for (std::int64_t i = 0; i < n; ++i) {
              const float cv = scale != 1.0f ? fc[i] * scale : fc[i];
              const float sv = scale != 1.0f ? fs[i] * scale : fs[i];
              const float* row_c = ca.data() + (e - 3) * stride;
              const float* row_s = sa.data() + (e - 3) * stride;
              const std::int64_t i0 = half ? i : 2 * i, i1 = half ? i + n : 2 * i + 1;
              CHECK(row_c[i0] == cv);
              CHECK(row_c[i1] == cv);
              CHECK(row_s[i0] == sv);
              CHECK(row_s[i1] == sv);
            }
            CHECK(ca[(e - 3) * stride + 2 * n] == 5.0f);  // nothing written past the row
          }
        }
      }
    }
  }
  for (std::int64_t head_dim : {2, 6, 10, 64, 128, 130}) {
    for (std::int64_t rd = 2; rd <= head_dim; rd += (rd < 16 ? 2 : 30)) {
      const std::int64_t heads = 3, n = rd / 2;
      std::vector<float> c(n), s(n), cd(rd), ss(rd), x(heads * head_dim);
      for (std::int64_t i = 0; i < n; ++i) {
        const double a = ux(rng);
        c[i] = cd[2 * i] = cd[2 * i + 1] = static_cast<float>(std::cos(a));
        s[i] = ss[2 * i + 1] = static_cast<float>(std::sin(a));
        ss[2 * i] = -s[i];
      }
      for (float& v : x)
        v = ux(rng);
      std::vector<float> a = x, b = x;
      pd::scalar::rotate_half(c.data(), s.data(), n, heads, head_dim, a.data());
      pd::simd::rotate_half(c.data(), s.data(), n, heads, head_dim, b.data());
      CHECK(a == b);
      a = x, b = x;
      pd::scalar::rotate_interleaved(cd.data(), ss.data(), rd, heads, head_dim, a.data());
      pd::simd::rotate_interleaved(cd.data(), ss.data(), rd, heads, head_dim, b.data());
      CHECK(a == b);
    }
  }
}
#endif

// The JSON reader's numbers (config values) are the nearest doubles, as strtod reads them, over
// the normal range (subnormal results may be an ulp off: nothing in a config is that small).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "io/json_header.hpp"

TEST_CASE("JSON numbers are correctly rounded doubles", "[rotary][json]") {
  std::mt19937_64 rng(21);
  int checked = 0;
  for (int t = 0; t < 200000; ++t) {
    double v;
    const std::uint64_t bits = rng();
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v) || std::fabs(v) < 1e-300) continue;
    char text[64];
    std::snprintf(text, sizeof text, "%.*g", 1 + t % 17, v);
    pd::JsonValue j;
    REQUIRE(pd::parse_json(text, std::strlen(text), &j));
    INFO(text);
    CHECK(j.number == std::strtod(text, nullptr));
    ++checked;
  }
  for (const char* text : {"0.1", "1e-05", "500000.0", "1.0800000429153442", "-0.0", "10000",
                           "123456789012345678901234567890", "0.0000000000000000000001e22",
                           "1.7976931348623157e308", "2.2250738585072014e-308"}) {
    pd::JsonValue j;
    REQUIRE(pd::parse_json(text, std::strlen(text), &j));
    INFO(text);
    CHECK(j.number == std::strtod(text, nullptr));
  }
  pd::JsonValue j;
  REQUIRE(pd::parse_json("1e400", 5, &j));
  CHECK(std::isinf(j.number));
  CHECK(checked > 100000);
}
