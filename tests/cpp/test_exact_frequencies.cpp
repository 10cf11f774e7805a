// The paper's formula with its frequencies as real numbers (Spec::exact_frequencies): every value
// of every path (consecutive rows, explicit positions, one row at a time with an anchor cache,
// add_to, concat) is the float32 nearest to sin / cos of p * m (b / m)^(-e_i), the frequency taken
// as the real number, at positions to 2^24 - 1; held to the quad-precision oracle (oracle.cpp:
// its own exp and log series, checked here against libquadmath natively).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "math/exact_math.hpp"
#include "oracle.hpp"
#include "posenc/posenc.hpp"

using namespace posenc;

namespace {

#if defined(__EMSCRIPTEN__)
constexpr int kRandomSpecs = 64;
#else
constexpr int kRandomSpecs = 96;
#endif

// A spec that uses the formula: random dim (1..4096, odd ones too), layout, frequency rule, odd
// policy, base and min_timescale.
Spec random_spec(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> pick(0, 999);
  Spec s;
  const int size = pick(rng) % 4;
  s.dim = size == 0   ? 1 + pick(rng) % 64
          : size == 1 ? 64 + pick(rng) % 960
                      : 1 + pick(rng) * 4 + pick(rng) % 4;
  s.dim = std::min<std::int64_t>(s.dim, 4096);
  s.layout = pick(rng) % 2 == 0 ? Layout::interleaved : Layout::split;
  s.frequencies = pick(rng) % 3 == 0 ? Frequencies::half : Frequencies::paper;
  s.odd = pick(rng) % 2 == 0 ? OddDim::paper : OddDim::zero_pad;
  const double bases[] = {10000.0, 10000.0, 500.0, 1e6, 10000.5, 123.456, 2.0, 1e9};
  const double scales[] = {1.0, 1.0, 1.0, 0.5, 2.0, 1.0 / 3.0, 1e-3};
  s.base = bases[pick(rng) % 8];
  s.min_timescale = scales[pick(rng) % 7];
  if (!(s.base > s.min_timescale)) s.min_timescale = 1.0;
  return s;
}

struct Count {
  std::int64_t values = 0, bad = 0, ties = 0;
  void add(const Spec& spec, const std::vector<double>& positions, const std::vector<float>& got) {
    values += static_cast<std::int64_t>(got.size());
    bad += oracle::count_misrounded(spec, positions, got, &ties);
  }
};

std::vector<double> consecutive(double first, std::int64_t count) {
  std::vector<double> p(static_cast<std::size_t>(count));
  for (std::int64_t r = 0; r < count; ++r)
    p[static_cast<std::size_t>(r)] = first + static_cast<double>(r);
  return p;
}

}  // namespace

#if !defined(__EMSCRIPTEN__)
TEST_CASE("the oracle's quad exp and log series agree with libquadmath", "[exact]") {
  double worst_exp = 0, worst_log = 0;
  for (double x = -700.0; x <= 700.0; x += 0.37)
    worst_exp = std::max(worst_exp, oracle::series_exp_error(x));
  for (double x :
       {0.001, 0.5, 0.75, 1.5, 2.0, 3.0, 10.0, 123.456, 10000.0, 10000.5, 1e6, 1e9, 1e300})
    worst_log = std::max(worst_log, oracle::series_log_error(x));
  std::printf("[exact] oracle series: exp within %.3g, log within %.3g of libquadmath\n", worst_exp,
              worst_log);
  CHECK(worst_exp < 0x1p-100);
  CHECK(worst_log < 0x1p-108);
}
#endif

TEST_CASE(
    "exact frequencies are the nearest doubles, with low parts within 2^-98 of the real "
    "values",
    "[exact]") {
  std::mt19937_64 rng(22);
  std::int64_t checked = 0, off = 0;
  double worst = 0;
  for (int k = 0; k < kRandomSpecs * 4; ++k) {
    const Spec spec = random_spec(rng);
    REQUIRE(validate(spec) == Status::ok);
    const std::int64_t n = columns_of(spec).sines;
    std::vector<double> w(static_cast<std::size_t>(n)), lo(static_cast<std::size_t>(n));
    frequencies(spec, w.data(), lo.data());
    for (std::int64_t i = 0; i < n; ++i) {
      const oracle::QuadFrequency real = oracle::real_frequency(spec, i);
      const auto u = static_cast<std::size_t>(i);
      // (w + lo) - (hi + lo') relative to w: the heads are within an ulp, so w - hi is exact.
      const double diff = std::fabs(((w[u] - real.hi) + (lo[u] - real.lo)) / w[u]);
      worst = std::max(worst, diff);
      off += w[u] != real.hi;
      CHECK(w[u] == frequency(spec, i));
      ++checked;
    }
  }
  std::printf(
      "[exact] %lld frequencies: double-double within %.3g (2^%.1f) of the real values, "
      "%lld heads not the nearest double\n",
      static_cast<long long>(checked), worst, std::log2(worst > 0 ? worst : 1e-300),
      static_cast<long long>(off));
  CHECK(worst < 0x1p-98);
  CHECK(off == 0);
}

TEST_CASE("framework presets keep their float64 frequencies", "[exact]") {
  for (int p = 0; p < kPresetCount; ++p) {
    const Preset preset = static_cast<Preset>(p);
    const Spec spec = preset_spec(preset, 512);
    INFO(preset_info(preset).name);
    CHECK(spec.exact_frequencies == (preset == Preset::vaswani));
    if (spec.exact_frequencies) continue;
    const std::int64_t n = columns_of(spec).sines;
    const double log_range = math::log(spec.base / spec.min_timescale);
    std::vector<double> w(static_cast<std::size_t>(n)), lo(static_cast<std::size_t>(n), 1.0);
    frequencies(spec, w.data(), lo.data());
    for (std::int64_t i = 0; i < n; ++i) {
      const double e = spec.frequencies == Frequencies::paper
                           ? 2.0 * static_cast<double>(i) / 512.0
                           : static_cast<double>(i) / static_cast<double>(n - 1);
      CHECK(w[static_cast<std::size_t>(i)] == spec.min_timescale * math::exp(-e * log_range));
      CHECK(lo[static_cast<std::size_t>(i)] == 0.0);
    }
  }
}

TEST_CASE(
    "the paper's formula is correctly rounded for the real frequencies on every path, at "
    "positions to 2^24 - 1",
    "[exact]") {
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Count bulk, explicit_rows, cached, added, concatenated;
  std::int64_t scaled_bad = 0;  // add_to with embeddings and a scale
  for (int k = 0; k < kRandomSpecs; ++k) {
    const Spec spec = random_spec(rng);
    REQUIRE(validate(spec) == Status::ok);
    INFO(oracle::describe(spec) << " m=" << spec.min_timescale);
    const SinusoidalEncoder encoder(spec);
    const auto d = static_cast<std::size_t>(spec.dim);
    // Rows per case: about 6000 values, at least 16 rows (the bulk path).
    const std::int64_t rows = std::max<std::int64_t>(16, 6000 / spec.dim);
    const double limit = 16777216.0 - static_cast<double>(rows);
    // Consecutive rows at a random offset below 2^24 (the first spec of all at its very end).
    const double first = k == 0 ? limit : std::floor(unit(rng) * limit);
    {
      RowPositions rp;
      rp.count = rows;
      rp.first_position = first;
      std::vector<float> out(static_cast<std::size_t>(rows) * d);
      REQUIRE(encoder.encode(rp, out.data(), out.size()) == Status::ok);
      bulk.add(spec, consecutive(first, rows), out);
      // add_to with scale 1 into zeros gives the values themselves (0 * 1 + v).
      std::vector<float> sum(out.size(), 0.0f);
      REQUIRE(encoder.add_to(rp, 1.0f, sum.data(), sum.size()) == Status::ok);
      added.add(spec, consecutive(first, rows), sum);
      // add_to proper: random embeddings, scale sqrt(dim): fround(fround(e * s) + PE) with the PE
      // just checked.
      std::uniform_real_distribution<float> any(-4.0f, 4.0f);
      std::vector<float> emb_scaled(out.size());
      for (float& e : emb_scaled)
        e = any(rng);
      const float s = std::sqrt(static_cast<float>(spec.dim));
      std::vector<float> scaled = emb_scaled;
      REQUIRE(encoder.add_to(rp, s, scaled.data(), scaled.size()) == Status::ok);
      for (std::size_t i = 0; i < out.size(); ++i)
        scaled_bad += scaled[i] != emb_scaled[i] * s + out[i];
      // concat: the values after one embedding column.
      std::vector<float> emb(static_cast<std::size_t>(rows), 7.0f),
          cat(static_cast<std::size_t>(rows) * (d + 1));
      REQUIRE(encoder.concat(rp, emb.data(), emb.size(), 1, cat.data(), cat.size()) == Status::ok);
      std::vector<float> tail(out.size());
      for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) {
        CHECK(cat[r * (d + 1)] == 7.0f);
        std::copy(cat.begin() + static_cast<std::ptrdiff_t>(r * (d + 1) + 1),
                  cat.begin() + static_cast<std::ptrdiff_t>((r + 1) * (d + 1)),
                  tail.begin() + static_cast<std::ptrdiff_t>(r * d));
      }
      concatenated.add(spec, consecutive(first, rows), tail);
    }
    {  // Explicit positions, integer and fractional, up to 2^24 - 1.
      std::vector<double> positions(static_cast<std::size_t>(rows));
      for (std::size_t r = 0; r < positions.size(); ++r) {
        const double p = std::floor(unit(rng) * 16777215.0);
        positions[r] = r % 4 == 3 ? p + std::floor(unit(rng) * 64.0) / 64.0 : p;
      }
      positions[0] = 16777215.0;
      explicit_rows.add(spec, positions, oracle::encode_at(spec, positions));
    }
    {  // One row at a time through an anchor cache (incremental decoding), near a random offset.
      auto cache = encoder.make_anchor_cache();
      REQUIRE(cache != nullptr);
      const double start = std::floor(unit(rng) * (16777216.0 - 24.0));
      std::vector<float> out(24 * d);
      for (std::int64_t r = 0; r < 24; ++r) {
        RowPositions rp;
        rp.count = 1;
        rp.first_position = start + static_cast<double>(r);
        REQUIRE(encoder.encode(rp, out.data() + static_cast<std::size_t>(r) * d, d, cache.get()) ==
                Status::ok);
      }
      cached.add(spec, consecutive(start, 24), out);
    }
  }
  const auto report = [](const char* path, const Count& c) {
    std::printf(
        "[exact] %-13s %8lld values, %lld misrounded, %lld within 2^-58 of a midpoint "
        "(undecided)\n",
        path, static_cast<long long>(c.values), static_cast<long long>(c.bad),
        static_cast<long long>(c.ties));
  };
  report("consecutive", bulk);
  report("explicit", explicit_rows);
  report("cached rows", cached);
  report("add_to", added);
  report("concat", concatenated);
  CHECK(bulk.bad == 0);
  CHECK(explicit_rows.bad == 0);
  CHECK(cached.bad == 0);
  CHECK(added.bad == 0);
  CHECK(concatenated.bad == 0);
  CHECK(scaled_bad == 0);
}

TEST_CASE("the issue's cases: the paper's table at long positions equals the formula", "[exact]") {
  struct Case {
    std::int64_t rows, dim;
    double first;
    Frequencies frequencies;
  };
  const Case cases[] = {{256, 128, 16777216.0 - 300.0, Frequencies::paper},
                        {64, 1000, 1048576.0, Frequencies::paper},
                        {64, 256, 4194304.0, Frequencies::half},
                        {200, 33, 4096.0, Frequencies::paper}};
  for (const Case& c : cases) {
    Spec spec;
    spec.dim = c.dim;
    spec.frequencies = c.frequencies;
    std::vector<float> out(static_cast<std::size_t>(c.rows * c.dim));
    RowPositions rp;
    rp.count = c.rows;
    rp.first_position = c.first;
    REQUIRE(encode(spec, rp, out.data(), out.size()) == Status::ok);
    std::int64_t ties = 0;
    CHECK(oracle::count_misrounded(spec, consecutive(c.first, c.rows), out, &ties) == 0);
    CHECK(ties == 0);
  }
}

TEST_CASE("MAE's 2D table: the real frequencies base^(-k/q), every value correctly rounded",
          "[exact]") {
  // One grid row of 65536 columns: row j's first half is the 1D table at coordinate j, sin then
  // cos of j w_k, w_k = base^(-k/q) (q = dim/4), the paper table's w_k for a spec of dim 2q.
  for (double base : {10000.0, 123.5}) {
    Sincos2dSpec spec;
    spec.height = 1;
    spec.width = 65536;
    spec.dim = 24;
    spec.base = base;
    Sincos2dTable table;
    REQUIRE(table.init(spec).ok());
    const std::int64_t q = spec.dim / 4;
    Spec paper;
    paper.dim = 2 * q;
    paper.base = base;
    std::vector<oracle::QuadFrequency> w;
    for (std::int64_t k = 0; k < q; ++k) {
      w.push_back(oracle::real_frequency(paper, k));
      CHECK(table.frequencies()[static_cast<std::size_t>(k)] == w.back().hi);
    }
    std::vector<float> out(static_cast<std::size_t>(spec.width * spec.dim));
    REQUIRE(table.write_rows(0, spec.width, out.data(), out.size()).ok());
    std::int64_t bad = 0, ties = 0;
    for (std::int64_t j = 0; j < spec.width; ++j) {
      for (std::int64_t k = 0; k < q; ++k) {
        for (bool cosine : {false, true}) {
          const oracle::Rounded want = oracle::rounded_sin_cos(
              static_cast<double>(j), w[static_cast<std::size_t>(k)], cosine);
          ties += want.tie;
          const float got = out[static_cast<std::size_t>(j * spec.dim + (cosine ? q : 0) + k)];
          bad += !oracle::acceptable(got, want);
        }
      }
    }
    std::printf("[exact] MAE 2D base %g: %lld values, %lld misrounded, %lld undecided\n", base,
                static_cast<long long>(spec.width * 2 * q), static_cast<long long>(bad),
                static_cast<long long>(ties));
    CHECK(bad == 0);
  }
}
