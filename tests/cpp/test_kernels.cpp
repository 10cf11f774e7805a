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
  static void sincos_row(const pd::SplitFrequencies& F, std::int64_t n, double p, double* s,
                         double* c) {
    pd::scalar::sincos_row(F, n, p, s, c);
  }
  static void direct_row(const pd::RowLayout& L, const pd::SplitFrequencies& F, double p, bool add,
                         float k, float* out) {
    pd::scalar::direct_row(L, F, p, add, k, out);
  }
  static void rotate_rows(const pd::RowLayout& L, const pd::SplitFrequencies& F, const double* sa,
                          const double* ca, const double* sj, const double* cj, double a, double j,
                          bool add, float k, float* plus, float* minus) {
    pd::scalar::rotate_rows(L, F, sa, ca, sj, cj, a, j, add, k, plus, minus);
  }
  static void rotate_row(const pd::RowLayout& L, const pd::SplitFrequencies& F, const double* sa,
                         const double* ca, const double* sj, const double* cj, double a, double j,
                         bool minus, bool add, float k, float* out) {
    pd::scalar::rotate_row(L, F, sa, ca, sj, cj, a, j, minus, add, k, out);
  }
};

#if POSENC_TEST_SIMD
struct SimdKernels {
  static constexpr const char* name = "simd";
  static void sincos_row(const pd::SplitFrequencies& F, std::int64_t n, double p, double* s,
                         double* c) {
    pd::simd::sincos_row(F, n, p, s, c);
  }
  static void direct_row(const pd::RowLayout& L, const pd::SplitFrequencies& F, double p, bool add,
                         float k, float* out) {
    pd::simd::direct_row(L, F, p, add, k, out);
  }
  static void rotate_rows(const pd::RowLayout& L, const pd::SplitFrequencies& F, const double* sa,
                          const double* ca, const double* sj, const double* cj, double a, double j,
                          bool add, float k, float* plus, float* minus) {
    pd::simd::rotate_rows(L, F, sa, ca, sj, cj, a, j, add, k, plus, minus);
  }
  static void rotate_row(const pd::RowLayout& L, const pd::SplitFrequencies& F, const double* sa,
                         const double* ca, const double* sj, const double* cj, double a, double j,
                         bool minus, bool add, float k, float* out) {
    pd::simd::rotate_row(L, F, sa, ca, sj, cj, a, j, minus, add, k, out);
  }
};
#endif

// A spec's frequencies as the kernels read them (padded with the last one).
struct KernelFrequencies {
  std::vector<double> w, lo, wl;  // lo: the low parts of exact frequencies (zeros otherwise)
  explicit KernelFrequencies(const Spec& spec) {
    const auto n = static_cast<std::size_t>(columns_of(spec).sines);
    w.resize(n);
    lo.resize(n);
    frequencies(spec, w.data(), lo.data());
    const auto padded = static_cast<std::size_t>(
        std::max<std::int64_t>(pd::kernel_pad(static_cast<std::int64_t>(n)), 4));
    w.resize(padded, n == 0 ? 0.0 : w[n - 1]);
    lo.resize(padded, n == 0 ? 0.0 : lo[n - 1]);
    wl.resize(padded);
    for (std::size_t i = 0; i < padded; ++i) {
      double wh;
      pd::split(w[i], wh, wl[i]);
    }
  }
  std::int64_t size() const { return static_cast<std::int64_t>(w.size()); }
  pd::SplitFrequencies split() const {
    pd::SplitFrequencies F;
    F.w = w.data();
    F.lo = lo.data();
    F.wl = wl.data();
    return F;
  }
};

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
  // The float64 frequencies of the framework presets (no low parts) once per dim.
  Spec rounded = specs.front();
  rounded.exact_frequencies = false;
  specs.push_back(rounded);
  return specs;
}

pd::RowLayout layout_of(const Spec& spec) {
  return pd::row_layout(spec, columns_of(spec));
}

const double kOffsets[] = {0.0, 0.5, 1048576.0, 16777216.0 - 1000.0};
const std::int64_t k_steps[] = {0, 1, 37, 64};

// Worst |error| against the oracle over rows (and CHECKs every value is correctly rounded);
// also checks add mode.
template <class K>
double check_kernels(const Spec& spec, std::int64_t* misrounded) {
  const pd::RowLayout L = layout_of(spec);
  const KernelFrequencies freqs(spec);
  const pd::SplitFrequencies F = freqs.split();
  const std::int64_t n = freqs.size();
  const std::size_t d = static_cast<std::size_t>(spec.dim);
  std::vector<double> sa(n), ca(n), sb(n), cb(n), sj(n), cj(n);
  std::vector<float> row(d), other(d), sum(d), sum2(d), emb(d);
  std::mt19937 rng(static_cast<std::uint32_t>(spec.dim));
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  double worst = 0;
  for (double offset : kOffsets) {
    for (std::int64_t j : {0, 1, 37, 63}) {
      const double p = offset + static_cast<double>(j) + 999.0;
      const std::vector<double> want = oracle::table(spec, {p});
      INFO(K::name << " " << oracle::describe(spec) << " p=" << p << " j=" << j);
      K::direct_row(L, F, p, false, 1.0f, row.data());
      const double e_direct = oracle::max_abs_diff(row, want);
      *misrounded += oracle::count_misrounded(spec, {p}, row);
      // p = a + j (the plus row of anchor a) and p = b - j (the minus row of anchor b).
      const double a = p - static_cast<double>(j), b = p + static_cast<double>(j);
      K::sincos_row(F, n, a, sa.data(), ca.data());
      K::sincos_row(F, n, b, sb.data(), cb.data());
      K::sincos_row(F, n, static_cast<double>(j), sj.data(), cj.data());
      K::rotate_rows(L, F, sa.data(), ca.data(), sj.data(), cj.data(), a, static_cast<double>(j),
                     false, 1.0f, row.data(), other.data());
      const double e_plus = oracle::max_abs_diff(row, want);
      *misrounded += oracle::count_misrounded(spec, {p}, row);
      K::rotate_rows(L, F, sb.data(), cb.data(), sj.data(), cj.data(), b, static_cast<double>(j),
                     false, 1.0f, other.data(), row.data());
      const double e_minus = oracle::max_abs_diff(row, want);
      *misrounded += oracle::count_misrounded(spec, {p}, row);
      // The one-row kernel, both signs: the same rows.
      std::vector<float> pair = row;
      K::rotate_row(L, F, sb.data(), cb.data(), sj.data(), cj.data(), b, static_cast<double>(j),
                    true, false, 1.0f, row.data());
      CHECK(row == pair);
      K::rotate_row(L, F, sa.data(), ca.data(), sj.data(), cj.data(), a, static_cast<double>(j),
                    false, false, 1.0f, row.data());
      CHECK(row == pair);
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
          K::direct_row(L, F, p, true, scale, sum.data());
        } else if (mode == 1) {
          K::rotate_rows(L, F, sa.data(), ca.data(), sj.data(), cj.data(), a,
                         static_cast<double>(j), true, scale, sum.data(), sum2.data());
        } else {
          K::rotate_rows(L, F, sb.data(), cb.data(), sj.data(), cj.data(), b,
                         static_cast<double>(j), true, scale, sum2.data(), sum.data());
        }
        // add: fround(fround(emb * scale) + PE) with PE the correctly rounded value.
        for (std::size_t c = 0; c < d; ++c) {
          const oracle::Rounded pe = oracle::rounded(spec, p, static_cast<std::int64_t>(c));
          const float scaled = emb[c] * scale;
          const bool ok = sum[c] == scaled + pe.value || (pe.tie && sum[c] == scaled + pe.other);
          if (!ok) ++*misrounded;
        }
      }
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("every kernel rounds correctly over dims, layouts and offsets", "[kernels]") {
  double worst_scalar = 0, worst_simd = 0;
  std::int64_t misrounded = 0;
  for (std::int64_t dim : test_dims()) {
    for (const Spec& spec : specs_for(dim)) {
      worst_scalar = std::max(worst_scalar, check_kernels<ScalarKernels>(spec, &misrounded));
#if POSENC_TEST_SIMD
      worst_simd = std::max(worst_simd, check_kernels<SimdKernels>(spec, &misrounded));
#endif
    }
  }
  CHECK(misrounded == 0);
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
      const KernelFrequencies freqs(spec);
      const pd::SplitFrequencies F = freqs.split();
      const std::int64_t n = freqs.size();
      std::vector<double> s1(n), c1(n), s2(n), c2(n), sj(n), cj(n);
      std::vector<float> r1(dim), r2(dim);
      std::vector<double> ps = {0.0, 3.0, 12345.5, 16777215.0};
      std::mt19937 rng(static_cast<std::uint32_t>(dim));
      std::uniform_real_distribution<double> any(0.0, 16777216.0);
      for (int k = 0; k < 200; ++k)
        ps.push_back(std::floor(any(rng)));
      for (double p : ps) {
        pd::scalar::sincos_row(F, n, p, s1.data(), c1.data());
        pd::simd::sincos_row(F, n, p, s2.data(), c2.data());
        CHECK(s1 == s2);
        CHECK(c1 == c2);
        pd::scalar::direct_row(L, F, p, false, 1.0f, r1.data());
        pd::simd::direct_row(L, F, p, false, 1.0f, r2.data());
        CHECK(r1 == r2);
        const double j = static_cast<double>(k_steps[static_cast<std::size_t>(p) % 4]);
        pd::scalar::sincos_row(F, n, j, sj.data(), cj.data());
        std::vector<float> m1(dim, 2.0f), m2(dim, 2.0f);
        r1.assign(dim, 2.0f);
        r2.assign(dim, 2.0f);
        pd::scalar::rotate_rows(L, F, s1.data(), c1.data(), sj.data(), cj.data(), p, j, false, 1.0f,
                                r1.data(), m1.data());
        pd::simd::rotate_rows(L, F, s1.data(), c1.data(), sj.data(), cj.data(), p, j, false, 1.0f,
                              r2.data(), m2.data());
        CHECK(r1 == r2);
        CHECK(m1 == m2);
        for (bool minus : {false, true}) {
          for (bool add : {false, true}) {
            std::vector<float> o1(dim, 3.0f), o2(dim, 3.0f);
            pd::scalar::rotate_row(L, F, s1.data(), c1.data(), sj.data(), cj.data(), p, j, minus,
                                   add, 0.5f, o1.data());
            pd::simd::rotate_row(L, F, s1.data(), c1.data(), sj.data(), cj.data(), p, j, minus, add,
                                 0.5f, o2.data());
            CHECK(o1 == o2);
          }
        }
        pd::scalar::rotate_rows(L, F, s1.data(), c1.data(), sj.data(), cj.data(), p, j, true, 0.5f,
                                r1.data(), m1.data());
        pd::simd::rotate_rows(L, F, s1.data(), c1.data(), sj.data(), cj.data(), p, j, true, 0.5f,
                              r2.data(), m2.data());
        CHECK(r1 == r2);
        CHECK(m1 == m2);
      }
    }
  }
}
#endif

// sincos_row (anchors and the angle-addition table) is within d = 2^-52 of the exact values (the
// angles of the real frequencies, through their low parts): the
// error bounds of encode.cpp rest on it (they assume d = 2^-52; about 2^-53 is measured).
template <class K>
double sincos_row_error() {
  double worst = 0;
  for (Frequencies kind : {Frequencies::paper, Frequencies::half}) {
    Spec spec;
    spec.dim = 512;
    spec.frequencies = kind;
    const KernelFrequencies freqs(spec);
    const std::int64_t n = freqs.size();
    std::vector<double> s(n), c(n);
    std::vector<oracle::QuadFrequency> real;
    for (std::int64_t i = 0; i < 256; ++i)
      real.push_back(oracle::real_frequency(spec, i));
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> any(0.0, 16777216.0);
    for (int k = 0; k < 400; ++k) {
      const double p = k < 64 ? static_cast<double>(k) : std::floor(any(rng));
      K::sincos_row(freqs.split(), n, p, s.data(), c.data());
      for (std::int64_t i = 0; i < 256; ++i) {
        const oracle::QuadFrequency w = real[static_cast<std::size_t>(i)];
        worst = std::max(
            {worst, oracle::error_of(s[i], p, w, false), oracle::error_of(c[i], p, w, true)});
      }
    }
  }
  return worst;
}

TEST_CASE("float64 anchors are within 2^-52 of the exact values", "[kernels]") {
  const double scalar = sincos_row_error<ScalarKernels>();
  std::printf("[kernels] sincos_row worst error: %.3f * 2^-53 (scalar)\n", scalar * 0x1p53);
  CHECK(scalar <= 0x1p-52);
#if POSENC_TEST_SIMD
  CHECK(sincos_row_error<SimdKernels>() == scalar);
#endif
}

TEST_CASE("the hard-case path rounds correctly on its own", "[kernels]") {
  // rounded_exact (double-double Taylor series) at random angles up to 2^24, positions 0 and
  // fractional ones included; the kernels call it only for the rare hard cases.
  std::mt19937_64 rng(15);
  std::uniform_real_distribution<double> position(0.0, 16777216.0), frequency(1e-4, 1.0);
  std::int64_t bad = 0;
  for (int k = 0; k < 20000; ++k) {
    const double p = k % 3 == 0 ? position(rng) : std::floor(position(rng)), w = frequency(rng);
    for (bool cosine : {false, true})
      bad += !oracle::acceptable(pd::rounded_exact(p, w, 0.0, cosine),
                                 oracle::rounded_sin_cos(p, w, cosine));
  }
  CHECK(bad == 0);
  // With a real frequency's tail (|lo| <= ulp(w) / 2): the angle is p (w + lo).
  std::uniform_real_distribution<double> tail(-0x1p-54, 0x1p-54);
  std::int64_t bad_tail = 0;
  for (int k = 0; k < 20000; ++k) {
    const double p = std::floor(position(rng)), w = frequency(rng), lo = w * tail(rng);
    for (bool cosine : {false, true})
      bad_tail +=
          !oracle::acceptable(pd::rounded_exact(p, w, lo, cosine),
                              oracle::rounded_sin_cos(p, oracle::QuadFrequency{w, lo}, cosine));
  }
  CHECK(bad_tail == 0);
  CHECK(pd::rounded_exact(0.0, 0.5, 0x1p-60, false) == 0.0f);
  CHECK(pd::rounded_exact(0.0, 0.5, 0x1p-60, true) == 1.0f);
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
        CHECK(oracle::count_misrounded(spec, positions, whole) == 0);
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
          // Every path gives a row's value from its position alone (correctly rounded).
          CHECK(pieces == whole);
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
