// The fast kernels (cpp/src/kernels.hpp) against the float64 oracle: the portable kernels
// always; the wasm SIMD kernels in the -msimd128 build, and natively through simde when
// libsimde-dev is installed. Dims 1..70 (every tail), 511..513 and 4096, both layouts, both
// odd-dim policies, offsets up to 2^24, and SinusoidalEncoder calls in chunks of 1..1000 rows.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "oracle.hpp"
#include "posenc/posenc.hpp"
#include "sincos/kernels.hpp"

#if !defined(__wasm_simd128__) && defined(__has_include) && !defined(__EMSCRIPTEN__)
#if __has_include(<simde/wasm/simd128.h>)
#define POSENC_SIMD_VIA_SIMDE 1
#include "sincos/kernel_simd.hpp"
#endif
#endif
#if defined(__wasm_simd128__) || defined(POSENC_SIMD_VIA_SIMDE)
#define POSENC_TEST_SIMD 1
#endif

using namespace posenc;
namespace pd = posenc::detail;

namespace {

struct ScalarKernels {
  static constexpr const char* name = "scalar";
  static void anchors(const double* w, std::int64_t n, double p, float* s, float* c) {
    pd::scalar::anchors(w, n, p, s, c);
  }
  static void direct_row(const pd::RowLayout& L, const double* w, double p, bool add, float k,
                         float* out) {
    pd::scalar::direct_row(L, w, p, add, k, out);
  }
  static void rotate_rows(const pd::RowLayout& L, const float* sa, const float* ca, const float* sj,
                          const float* cj, bool add, float k, float* plus, float* minus) {
    pd::scalar::rotate_rows(L, sa, ca, sj, cj, add, k, plus, minus);
  }
};

#if POSENC_TEST_SIMD
struct SimdKernels {
  static constexpr const char* name = "simd";
  static void anchors(const double* w, std::int64_t n, double p, float* s, float* c) {
    pd::simd::anchors(w, n, p, s, c);
  }
  static void direct_row(const pd::RowLayout& L, const double* w, double p, bool add, float k,
                         float* out) {
    pd::simd::direct_row(L, w, p, add, k, out);
  }
  static void rotate_rows(const pd::RowLayout& L, const float* sa, const float* ca, const float* sj,
                          const float* cj, bool add, float k, float* plus, float* minus) {
    pd::simd::rotate_rows(L, sa, ca, sj, cj, add, k, plus, minus);
  }
};
#endif

std::vector<std::int64_t> test_dims() {
  std::vector<std::int64_t> dims;
  for (std::int64_t d = 1; d <= 70; ++d)
    dims.push_back(d);
  for (std::int64_t d : {511, 512, 513, 4096})
    dims.push_back(d);
  return dims;
}

std::vector<Spec> specs_for(std::int64_t dim) {
  std::vector<Spec> specs;
  for (Layout layout : {Layout::interleaved, Layout::split}) {
    for (OddDim odd : {OddDim::paper, OddDim::zero_pad}) {
      if (dim % 2 == 0 && odd == OddDim::zero_pad) continue;
      Spec s;
      s.dim = dim;
      s.layout = layout;
      s.odd = odd;
      specs.push_back(s);
    }
  }
  return specs;
}

pd::RowLayout layout_of(const Spec& spec) {
  return pd::row_layout(spec, columns_of(spec));
}

std::vector<double> padded_frequencies(const Spec& spec) {
  std::vector<double> w = SinusoidalEncoder(spec).frequencies();
  w.resize(static_cast<std::size_t>(pd::kernel_pad(static_cast<std::int64_t>(w.size()))), 0.0);
  return w;
}

const double kOffsets[] = {0.0, 0.5, 1048576.0, 16777216.0 - 1000.0};

// Worst |error| against the oracle over rows; also checks add mode.
template <class K>
double check_kernels(const Spec& spec) {
  const pd::RowLayout L = layout_of(spec);
  const std::vector<double> w = padded_frequencies(spec);
  const std::int64_t n = static_cast<std::int64_t>(w.size());
  const std::size_t d = static_cast<std::size_t>(spec.dim);
  std::vector<float> sa(n), ca(n), sb(n), cb(n), sj(n), cj(n), row(d), other(d), sum(d), sum2(d),
      emb(d);
  std::mt19937 rng(static_cast<std::uint32_t>(spec.dim));
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  double worst = 0;
  for (double offset : kOffsets) {
    for (std::int64_t j : {0, 1, 37, 63}) {
      const double p = offset + static_cast<double>(j) + 999.0;
      const std::vector<double> want = oracle::table(spec, {p});
      INFO(K::name << " " << oracle::describe(spec) << " p=" << p << " j=" << j);
      K::direct_row(L, w.data(), p, false, 1.0f, row.data());
      const double e_direct = oracle::max_abs_diff(row, want);
      // p = a + j (the plus row of anchor a) and p = b - j (the minus row of anchor b).
      K::anchors(w.data(), n, p - static_cast<double>(j), sa.data(), ca.data());
      K::anchors(w.data(), n, p + static_cast<double>(j), sb.data(), cb.data());
      K::anchors(w.data(), n, static_cast<double>(j), sj.data(), cj.data());
      K::rotate_rows(L, sa.data(), ca.data(), sj.data(), cj.data(), false, 1.0f, row.data(),
                     other.data());
      const double e_plus = oracle::max_abs_diff(row, want);
      K::rotate_rows(L, sb.data(), cb.data(), sj.data(), cj.data(), false, 1.0f, other.data(),
                     row.data());
      const double e_minus = oracle::max_abs_diff(row, want);
      CHECK(e_direct <= oracle::kBound);
      CHECK(e_plus <= oracle::kBound);
      CHECK(e_minus <= oracle::kBound);
      worst = std::max({worst, e_direct, e_plus, e_minus});
      for (float& v : emb)
        v = u(rng);
      const float scale = 2.5f;
      for (int mode = 0; mode < 3; ++mode) {
        sum = emb;
        sum2 = emb;
        if (mode == 0) {
          K::direct_row(L, w.data(), p, true, scale, sum.data());
        } else if (mode == 1) {
          K::rotate_rows(L, sa.data(), ca.data(), sj.data(), cj.data(), true, scale, sum.data(),
                         sum2.data());
        } else {
          K::rotate_rows(L, sb.data(), cb.data(), sj.data(), cj.data(), true, scale, sum2.data(),
                         sum.data());
        }
        double e_add = 0;
        for (std::size_t c = 0; c < d; ++c) {
          const double exact = static_cast<double>(emb[c]) * scale + want[c];
          e_add = std::max(e_add, std::fabs(sum[c] - exact) - std::fabs(exact) * 0x1p-23);
        }
        CHECK(e_add <= oracle::kBound);
      }
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("every kernel is within 2^-22 of float64 over dims, layouts and offsets", "[kernels]") {
  double worst_scalar = 0, worst_simd = 0;
  for (std::int64_t dim : test_dims()) {
    for (const Spec& spec : specs_for(dim)) {
      worst_scalar = std::max(worst_scalar, check_kernels<ScalarKernels>(spec));
#if POSENC_TEST_SIMD
      worst_simd = std::max(worst_simd, check_kernels<SimdKernels>(spec));
#endif
    }
  }
#if POSENC_TEST_SIMD
  std::printf("[kernels] worst error: scalar %.3g, simd %.3g (bound %.3g)\n", worst_scalar,
              worst_simd, oracle::kBound);
#else
  (void)worst_simd;
  std::printf("[kernels] worst error: scalar %.3g, simd not built (bound %.3g)\n", worst_scalar,
              oracle::kBound);
#endif
}

#if POSENC_TEST_SIMD
TEST_CASE("the SIMD kernels equal the scalar kernels bit for bit", "[kernels]") {
  for (std::int64_t dim : {1, 2, 3, 5, 8, 9, 17, 64, 67, 513}) {
    for (const Spec& spec : specs_for(dim)) {
      INFO(oracle::describe(spec));
      const pd::RowLayout L = layout_of(spec);
      const std::vector<double> w = padded_frequencies(spec);
      const std::int64_t n = static_cast<std::int64_t>(w.size());
      std::vector<float> s1(n), c1(n), s2(n), c2(n), r1(dim), r2(dim);
      std::vector<double> ps = {0.0, 3.0, 12345.5, 16777215.0};
      std::mt19937 rng(static_cast<std::uint32_t>(dim));
      std::uniform_real_distribution<double> any(0.0, 16777216.0);
      for (int k = 0; k < 200; ++k)
        ps.push_back(std::floor(any(rng)));
      for (double p : ps) {
        pd::scalar::anchors(w.data(), n, p, s1.data(), c1.data());
        pd::simd::anchors(w.data(), n, p, s2.data(), c2.data());
        CHECK(s1 == s2);
        CHECK(c1 == c2);
        pd::scalar::direct_row(L, w.data(), p, false, 1.0f, r1.data());
        pd::simd::direct_row(L, w.data(), p, false, 1.0f, r2.data());
        CHECK(r1 == r2);
        std::vector<float> m1(dim, 2.0f), m2(dim, 2.0f);
        r1.assign(dim, 2.0f);
        r2.assign(dim, 2.0f);
        pd::scalar::rotate_rows(L, s1.data(), c1.data(), c2.data(), s2.data(), false, 1.0f,
                                r1.data(), m1.data());
        pd::simd::rotate_rows(L, s1.data(), c1.data(), c2.data(), s2.data(), false, 1.0f, r2.data(),
                              m2.data());
        CHECK(r1 == r2);
        CHECK(m1 == m2);
        pd::scalar::rotate_rows(L, s1.data(), c1.data(), c2.data(), s2.data(), true, 0.5f,
                                r1.data(), m1.data());
        pd::simd::rotate_rows(L, s1.data(), c1.data(), c2.data(), s2.data(), true, 0.5f, r2.data(),
                              m2.data());
        CHECK(r1 == r2);
        CHECK(m1 == m2);
      }
    }
  }
}
#endif

// Without unit_pair's steps toward zero, nearest-rounded pairs put some rotated values one ulp
// above 1 (the case counts them, so the check below is not vacuous); with them, none.
template <class K>
void check_unit_range() {
  Spec spec;
  spec.dim = 512;
  const std::vector<double> w = padded_frequencies(spec);
  const std::int64_t n = static_cast<std::int64_t>(w.size());
  const pd::RowLayout L = layout_of(spec);
  std::vector<float> sa(n), ca(n), sj(n), cj(n), plus(512), minus(512);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> any(0.0, 16777216.0);
  std::int64_t nearest_over = 0, over = 0, steps = 0;
  for (int k = 0; k < 3000; ++k) {
    const double a = std::floor(any(rng)), j = static_cast<double>(k % 65);
    K::anchors(w.data(), n, a, sa.data(), ca.data());
    K::anchors(w.data(), n, j, sj.data(), cj.data());
    for (std::int64_t i = 0; i < n; ++i) {
      // Each pair: norm <= 1 and every value within one ulp of the float64 value.
      const double sd = std::sin(a * w[i]), cd = std::cos(a * w[i]);
      REQUIRE_FALSE(pd::above_unit(sa[i], ca[i]));
      REQUIRE(std::fabs(sa[i] - sd) <= std::fabs(std::nextafter(sa[i], 2.0f) - sa[i]));
      REQUIRE(std::fabs(ca[i] - cd) <= std::fabs(std::nextafter(ca[i], 2.0f) - ca[i]));
      steps += (sa[i] != static_cast<float>(sd)) + (ca[i] != static_cast<float>(cd));
      // The same products from nearest roundings.
      const float ns = static_cast<float>(sd), nc = static_cast<float>(cd);
      const float js = static_cast<float>(std::sin(j * w[i])),
                  jc = static_cast<float>(std::cos(j * w[i]));
      for (float v : {ns * jc + nc * js, nc * jc - ns * js, ns * jc - nc * js, nc * jc + ns * js})
        nearest_over += std::fabs(v) > 1.0f;
    }
    K::rotate_rows(L, sa.data(), ca.data(), sj.data(), cj.data(), false, 1.0f, plus.data(),
                   minus.data());
    for (std::size_t c = 0; c < 512; ++c)
      over += (std::fabs(plus[c]) > 1.0f) + (std::fabs(minus[c]) > 1.0f);
  }
  std::printf(
      "[kernels] %s: %lld values above 1 from nearest pairs, %lld with unit pairs (%lld steps)\n",
      K::name, static_cast<long long>(nearest_over), static_cast<long long>(over),
      static_cast<long long>(steps));
  CHECK(nearest_over > 0);
  CHECK(over == 0);
}

TEST_CASE("unit-norm anchors keep angle addition inside [-1, 1] without a clamp", "[kernels]") {
  check_unit_range<ScalarKernels>();
#if POSENC_TEST_SIMD
  check_unit_range<SimdKernels>();
#endif
}

TEST_CASE("SinusoidalEncoder calls in chunks agree with the oracle and with one call",
          "[kernels]") {
  const std::int64_t total = 150;
  double worst = 0;
  for (std::int64_t dim : test_dims()) {
    for (const Spec& spec : specs_for(dim)) {
      const SinusoidalEncoder enc(spec);
      const std::size_t d = static_cast<std::size_t>(dim);
      for (double offset : kOffsets) {
        INFO(oracle::describe(spec) << " offset=" << offset);
        std::vector<double> positions;
        for (std::int64_t r = 0; r < total; ++r)
          positions.push_back(offset + static_cast<double>(r));
        const std::vector<double> want = oracle::table(spec, positions);
        RowPositions all;
        all.count = total;
        all.first_position = offset;
        std::vector<float> whole(total * d);
        REQUIRE(enc.encode(all, whole.data(), whole.size()) == Status::ok);
        const double e_whole = oracle::max_abs_diff(whole, want);
        CHECK(e_whole <= oracle::kBound);
        worst = std::max(worst, e_whole);
        for (std::int64_t chunk : {1, 2, 3, 7, 64, 1000}) {
          std::vector<float> pieces(total * d);
          for (std::int64_t r = 0; r < total; r += chunk) {
            RowPositions part;
            part.count = std::min(chunk, total - r);
            part.first_position = offset + static_cast<double>(r);
            REQUIRE(enc.encode(part, pieces.data() + r * dim, part.count * d) == Status::ok);
          }
          const double e = oracle::max_abs_diff(pieces, want);
          CHECK(e <= oracle::kBound);
          worst = std::max(worst, e);
          // Calls on the angle-addition path give a row's value from its position alone.
          if (chunk >= 16) CHECK(pieces == whole);
        }
        // add_to in chunks of 1 (per-element path) and 64 (angle addition).
        for (std::int64_t chunk : {1, 64}) {
          std::vector<float> emb(total * d, 0.25f);
          for (std::int64_t r = 0; r < total; r += chunk) {
            RowPositions part;
            part.count = std::min(chunk, total - r);
            part.first_position = offset + static_cast<double>(r);
            REQUIRE(enc.add_to(part, 2.0f, emb.data() + r * dim, part.count * d) == Status::ok);
          }
          for (std::size_t i = 0; i < emb.size(); ++i)
            emb[i] -= 0.5f;  // exact: |values| <= 1.5
          CHECK(oracle::max_abs_diff(emb, want) <= oracle::kBound);
        }
      }
    }
  }
  std::printf("[kernels] worst SinusoidalEncoder error: %.3g (bound %.3g)\n", worst,
              oracle::kBound);
}

TEST_CASE("explicit positions, zero rows and concat on the fast paths", "[kernels]") {
  for (std::int64_t dim : {5, 64, 513}) {
    for (const Spec& spec : specs_for(dim)) {
      INFO(oracle::describe(spec));
      const SinusoidalEncoder enc(spec);
      std::vector<double> positions = {16777215.0, 0.0, 3.5, 1048576.0, 7.0, 7.0};
      std::vector<std::uint8_t> zero(positions.size(), 0);
      zero[1] = 1;
      RowPositions rows;
      rows.count = static_cast<std::int64_t>(positions.size());
      rows.positions = positions.data();
      rows.zero_rows = zero.data();
      rows.zero_position = 3.5;
      std::vector<float> out(positions.size() * dim, 9.0f);
      REQUIRE(enc.encode(rows, out.data(), out.size()) == Status::ok);
      std::vector<double> want = oracle::table(spec, positions);
      for (std::int64_t c = 0; c < dim; ++c)
        want[dim + c] = want[2 * dim + c] = 0.0;
      CHECK(oracle::max_abs_diff(out, want) <= oracle::kBound);

      // Consecutive rows with zero rows, on the angle-addition path; and concat.
      RowPositions run;
      run.count = 100;
      run.first_position = 60.0;
      run.zero_position = 70.0;
      std::vector<std::uint8_t> mask(100, 0);
      mask[3] = 1;
      run.zero_rows = mask.data();
      std::vector<double> pos;
      for (int r = 0; r < 100; ++r)
        pos.push_back(60.0 + r);
      std::vector<double> expect = oracle::table(spec, pos);
      for (int r : {3, 10})
        std::fill(expect.begin() + r * dim, expect.begin() + (r + 1) * dim, 0.0);
      std::vector<float> got(100 * dim);
      REQUIRE(enc.encode(run, got.data(), got.size()) == Status::ok);
      CHECK(oracle::max_abs_diff(got, expect) <= oracle::kBound);
      std::vector<float> emb(100 * 2, 4.0f), cat(100 * (2 + dim));
      REQUIRE(enc.concat(run, emb.data(), emb.size(), 2, cat.data(), cat.size()) == Status::ok);
      for (int r = 0; r < 100; ++r) {
        CHECK(cat[r * (2 + dim)] == 4.0f);
        CHECK(std::equal(got.begin() + r * dim, got.begin() + (r + 1) * dim,
                         cat.begin() + r * (2 + dim) + 2));
      }
    }
  }
}

TEST_CASE("angles beyond the fast reduction fall back to libm", "[kernels]") {
  Spec spec;
  spec.dim = 8;
  spec.min_timescale = 1000.0;
  spec.base = 1e7;
  RowPositions rows;
  rows.count = 20;
  rows.first_position = 3000000.0;  // p * w_0 = 3e9 > 2^31
  std::vector<float> fast(160), ref(160);
  REQUIRE(encode(spec, rows, fast.data(), fast.size()) == Status::ok);
  REQUIRE(encode_reference(spec, rows, ref.data(), ref.size()) == Status::ok);
  CHECK(fast == ref);
}
