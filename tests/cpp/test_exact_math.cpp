// math/exact_math.hpp (the table-free exp, log, log10, pow and erf that replace libm's) against
// the libm it replaces and against exact values.
//
// Natively: over every input the encodings use (each frequency of every dim 1..4096 and a sample
// up to 65536 for the usual bases, both frequency formulas of the presets, rotary and 2D
// frequencies, ALiBi slopes for 1..65536 heads, 10^k for the error messages) and random
// arguments, each result is compared with glibc's; where they differ, IEEE quad (libquadmath)
// decides which one is the float64 nearest to the exact value. Ours must be, every time; the
// counts are printed (glibc's exp, log and pow are not always correctly rounded: about 1 result
// in 10^3 for exp and pow, 1 in 3 * 10^4 for log). erf: the float32 results against quad erf.
// Under wasm (no quad libm there: musl's long double functions are the double ones) the results
// of a fixed sample must hash to the same value as natively: the same bits on every build.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "math/exact_math.hpp"

#ifndef __EMSCRIPTEN__
#include <quadmath.h>
#endif

namespace pm = posenc::math;

namespace {

#ifndef __EMSCRIPTEN__
// Whether v is the float64 nearest to exact (no neighbour is closer).
bool nearest(double v, __float128 exact) {
  const __float128 d = fabsq(static_cast<__float128>(v) - exact);
  return fabsq(static_cast<__float128>(std::nextafter(v, HUGE_VAL)) - exact) >= d &&
         fabsq(static_cast<__float128>(std::nextafter(v, -HUGE_VAL)) - exact) >= d;
}

// Per family: results compared, results that differ from glibc's, and of those, how many of
// ours and of glibc's are the nearest float64.
struct Tally {
  const char* name;
  long n = 0, differ = 0, ours_nearest = 0, glibc_nearest = 0;
  explicit Tally(const char* label) : name(label) {}
  template <class Exact>
  void add(double ours, double glibc, Exact exact) {
    ++n;
    if (ours == glibc || (std::isnan(ours) && std::isnan(glibc))) return;
    ++differ;
    const __float128 e = exact();
    if (nearest(ours, e)) ++ours_nearest;
    if (nearest(glibc, e)) ++glibc_nearest;
    if (differ <= 3 || !nearest(ours, e)) {
      char ob[64], gb[64];
      std::snprintf(ob, sizeof ob, "%a", ours);
      std::snprintf(gb, sizeof gb, "%a", glibc);
      std::printf("  %s: ours %s, glibc %s\n", name, ob, gb);
    }
  }
  ~Tally() {
    std::printf(
        "exact_math %-28s %9ld results, %6ld differ from glibc (ours nearest %ld, glibc %ld)\n",
        name, n, differ, ours_nearest, glibc_nearest);
    CHECK(ours_nearest == differ);
  }
};

__float128 q(double v) {
  return static_cast<__float128>(v);
}

// The sinusoidal frequencies min_timescale * exp(-x * log(base / min_timescale)) of every dim in
// dims: log and exp (the product is the same float64 when the logs agree).
void sinusoidal(double base, double min_ts, const std::vector<std::int64_t>& dims, Tally& lg,
                Tally& ex) {
  const double r = base / min_ts;
  lg.add(pm::log(r), std::log(r), [&] { return logq(q(r)); });
  const double L = pm::log(r);
  for (const std::int64_t d : dims) {
    const std::int64_t half = d / 2, sines = (d + 1) / 2;
    for (std::int64_t i = 0; i < sines; ++i) {
      // paper: 2i / dim; half (tensor2tensor): i / (n - 1), n = dim / 2 or (dim + 1) / 2
      const double xs[3] = {2.0 * static_cast<double>(i) / static_cast<double>(d),
                            half > 1 && i < half ? static_cast<double>(i) / (half - 1) : 0.0,
                            sines > 1 ? static_cast<double>(i) / (sines - 1) : 0.0};
      for (const double x : xs) {
        const double a = -x * L;
        ex.add(pm::exp(a), std::exp(a), [&] { return expq(q(a)); });
      }
    }
  }
}

// base^(2i/d) for every even d in dims (rotary, and the 2D MAE frequencies base^(k/(D/4))).
void powers(double base, const std::vector<std::int64_t>& dims, Tally& t) {
  for (const std::int64_t d : dims) {
    if (d % 2 != 0) continue;
    for (std::int64_t i = 0; i < d / 2; ++i) {
      const double e = static_cast<double>(2 * i) / static_cast<double>(d);
      t.add(pm::pow(base, e), std::pow(base, e), [&] { return powq(q(base), q(e)); });
    }
  }
}

std::vector<std::int64_t> dims_every(std::int64_t last) {
  std::vector<std::int64_t> d;
  for (std::int64_t i = 1; i <= last; ++i)
    d.push_back(i);
  return d;
}

std::vector<std::int64_t> dims_sample() {  // 4097..65536: every 509th dim, and 65536
  std::vector<std::int64_t> d;
  for (std::int64_t i = 4097; i <= 65536; i += 509)
    d.push_back(i);
  d.push_back(65536);
  return d;
}
#endif

// FNV-1a over the bits of results.
struct Digest {
  std::uint64_t h = 1469598103934665603ull;
  void add(double v) {
    std::uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    for (int k = 0; k < 8; ++k) {
      h ^= (b >> (8 * k)) & 0xff;
      h *= 1099511628211ull;
    }
  }
};

}  // namespace

#ifndef __EMSCRIPTEN__
TEST_CASE("exact_math: sinusoidal frequencies are correctly rounded (glibc compared)", "[math]") {
  const std::vector<std::int64_t> every = dims_every(4096), sample = dims_sample();
  Tally lg("log (sinusoidal)"), ex("exp (sinusoidal, dim <= 4096)"), ex2("exp (dim sample)");
  for (const double base : {10000.0, 500000.0, 1e6}) {
    sinusoidal(base, 1.0, every, lg, ex);
    sinusoidal(base, 1.0, sample, lg, ex2);
  }
  sinusoidal(10000.0, 2.0, dims_every(512), lg, ex2);  // a min_timescale other than 1
}

TEST_CASE("exact_math: rotary and 2D frequencies are correctly rounded (glibc compared)",
          "[math]") {
  Tally p("pow (rotary/2D, dim <= 4096)"), p2("pow (dim sample)");
  std::vector<std::int64_t> even;
  for (std::int64_t d = 2; d <= 4096; d += 2)
    even.push_back(d);
  for (const double base : {10000.0, 500000.0, 1e6, 100.0}) {
    powers(base, even, p);
    powers(base, dims_sample(), p2);
  }
  // Python-float steps of the HF rules: yarn's and longrope's logarithms.
  Tally lg("log (HF rules)");
  for (const double v : {4.0, 8.0, 16.0, 32.0, 40.0, 64.0, 4096.0, 8192.0, 32768.0, 10000.0,
                         500000.0, 1e6, 150000.0}) {
    lg.add(pm::log(v), std::log(v), [&] { return logq(q(v)); });
    for (const double beta : {1.0, 32.0}) {
      const double a = v / (beta * 2 * 3.141592653589793);
      lg.add(pm::log(a), std::log(a), [&] { return logq(q(a)); });
    }
  }
}

TEST_CASE("exact_math: ALiBi slopes for 1..65536 heads are correctly rounded (glibc compared)",
          "[math]") {
  Tally p("pow (ALiBi)");
  for (int log2n = 0; log2n <= 17; ++log2n) {  // closest powers of two up to 2 * 65536
    const double x = -(static_cast<double>(log2n) - 3);
    p.add(pm::pow(2.0, x), std::pow(2.0, x), [&] { return powq(q(2.0), q(x)); });
    const double s = -pm::pow(2.0, x);
    const double start = pm::pow(2.0, s);
    p.add(start, std::pow(2.0, s), [&] { return powq(q(2.0), q(s)); });
    for (std::int64_t i = 0; i < (std::int64_t{1} << log2n); ++i) {
      const double e = static_cast<double>(i);
      p.add(pm::pow(start, e), std::pow(start, e), [&] { return powq(q(start), q(e)); });
    }
  }
}

TEST_CASE("exact_math: random arguments and powers of ten (glibc compared)", "[math]") {
  std::mt19937_64 rng(20261123);
  const auto unit = [&] { return static_cast<double>(rng() >> 11) * 0x1p-53; };
  Tally ex("exp (random)"), lg("log (random)"), l10("log10 (random)"), pw("pow (random)"),
      p10("pow (10^k)");
  for (int k = 0; k < 200000; ++k) {
    const double a = (unit() - 0.5) * 1400;  // -700..700
    ex.add(pm::exp(a), std::exp(a), [&] { return expq(q(a)); });
    const double x = std::ldexp(0.5 + unit(), static_cast<int>(rng() % 2000) - 1000);
    lg.add(pm::log(x), std::log(x), [&] { return logq(q(x)); });
    l10.add(pm::log10(x), std::log10(x), [&] { return log10q(q(x)); });
    const double b = std::ldexp(0.5 + unit(), static_cast<int>(rng() % 40) - 20);
    const double e = (unit() - 0.5) * 40;
    pw.add(pm::pow(b, e), std::pow(b, e), [&] { return powq(q(b), q(e)); });
  }
  for (int k = -320; k <= 320; ++k)
    p10.add(pm::pow(10.0, k), std::pow(10.0, k), [&] { return powq(q(10.0), q(k)); });
  for (int k = -300; k <= 300; ++k) {
    const double x = pm::pow(10.0, k);
    CHECK(std::floor(pm::log10(x)) == std::floor(std::log10(x)));
  }
}

TEST_CASE("exact_math: erf rounds to the float32 nearest erf x (quad reference)", "[math]") {
  long n = 0, not_nearest = 0, differ_glibc = 0;
  double worst_ulp = 0;
  // every 997th float32 in [-4.5, 4.5] (|x| < 2^-30 included, the arithmetic is float64)
  std::uint32_t bits = 0;
  for (float x = -4.5f; x <= 4.5f;) {
    const float ours = pm::erf(x);
    const __float128 e = erfq(static_cast<__float128>(x));
    const float nearest_f = static_cast<float>(static_cast<double>(e));  // e is far from ties
    const double ulp = std::nextafter(std::fabs(nearest_f), 2.0f) - std::fabs(nearest_f);
    const double err = std::fabs(static_cast<double>(ours) - static_cast<double>(e)) / ulp;
    worst_ulp = std::max(worst_ulp, err);
    if (ours != nearest_f) ++not_nearest;
    if (ours != std::erf(x)) ++differ_glibc;
    ++n;
    std::memcpy(&bits, &x, sizeof bits);
    bits = x < 0 ? (bits <= 0x800003e5u ? 0u : bits - 997u) : bits + 997u;
    std::memcpy(&x, &bits, sizeof bits);
  }
  std::printf(
      "exact_math erf: %ld floats, %ld not the nearest float32, worst %.3f ulp; %ld differ "
      "from glibc erff\n",
      n, not_nearest, worst_ulp, differ_glibc);
  CHECK(worst_ulp < 0.51);
  CHECK(not_nearest * 100000 < n);
  CHECK(pm::erf(0.0f) == 0.0f);
  CHECK(pm::erf(4.0f) == 1.0f);
  CHECK(pm::erf(-10.0f) == -1.0f);
  CHECK(std::isnan(pm::erf(NAN)));
}
#endif

TEST_CASE("exact_math: special values and exact cases", "[math]") {
  CHECK(pm::exp(0.0) == 1.0);
  CHECK(pm::exp(1000.0) == HUGE_VAL);
  CHECK(pm::exp(-1000.0) == 0.0);
  CHECK(pm::exp(-744.0) > 0.0);
  CHECK(pm::log(1.0) == 0.0);
  CHECK(pm::log(0.0) == -HUGE_VAL);
  CHECK(std::isnan(pm::log(-1.0)));
  CHECK(pm::log(2.0) == 0x1.62e42fefa39efp-1);
  CHECK(pm::log10(1000.0) == 3.0);
  CHECK(pm::log10(1e-5) == -5.0);
  CHECK(pm::pow(2.0, -8.0) == 0x1p-8);
  CHECK(pm::pow(10.0, 5.0) == 1e5);
  CHECK(pm::pow(10.0, 22.0) == 1e22);
  CHECK(pm::pow(7.0, 0.0) == 1.0);
  CHECK(pm::pow(1.0, 1e300) == 1.0);
  CHECK(pm::pow(0.0, 2.0) == 0.0);
  CHECK(pm::pow(4.0, 0.5) == 2.0);
  CHECK(pm::pow(3.0, 1.0) == 3.0);
}

// The same bits in every build: a digest of results over a fixed sample, the constant measured
// natively (x86-64) and required under wasm (SIMD and baseline).
TEST_CASE("exact_math: the same results natively and in wasm", "[math]") {
  Digest d;
  for (std::int64_t dim = 1; dim <= 600; dim += 7)
    for (std::int64_t i = 0; i < dim; ++i) {
      const double e = static_cast<double>(i) / static_cast<double>(dim);
      d.add(pm::exp(-e * pm::log(10000.0)));
      d.add(pm::pow(500000.0, e));
      d.add(pm::log(1.0 + e));
      d.add(pm::log10(1.0 + 1000 * e));
      d.add(pm::erf(static_cast<float>(8 * e - 4)));
    }
  CHECK(d.h == 0x26de3de30e0fa349ull);
}
