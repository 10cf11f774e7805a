#include "oracle.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>

#if defined(__EMSCRIPTEN__)
// long double is IEEE binary128 (software) under Emscripten.
using quad = long double;
static quad quad_sin(quad x) {
  return sinl(x);
}
static quad quad_cos(quad x) {
  return cosl(x);
}
#else
extern "C" {
#include <quadmath.h>
}
using quad = __float128;
static quad quad_sin(quad x) {
  return sinq(x);
}
static quad quad_cos(quad x) {
  return cosq(x);
}
#endif
static_assert(sizeof(quad) == 16, "the oracle needs IEEE quad precision");

namespace oracle {

double value(const posenc::Spec& spec, double p, std::int64_t col) {
  const std::int64_t d = spec.dim;
  const bool odd = d % 2 != 0;
  const bool zero_pad = odd && spec.odd == posenc::OddDim::zero_pad;
  if (zero_pad && col == d - 1) return 0.0;
  const std::int64_t sines = zero_pad ? d / 2 : (d + 1) / 2;
  // Which frequency index and which function does this column hold?
  std::int64_t i;
  bool is_sine;
  if (spec.layout == posenc::Layout::interleaved) {
    i = col / 2;
    is_sine = col % 2 == 0;
  } else {
    is_sine = col < sines;
    i = is_sine ? col : col - sines;
  }
  double e;
  if (spec.frequencies == posenc::Frequencies::paper) {
    e = 2.0 * static_cast<double>(i) / static_cast<double>(d);
  } else {
    e = static_cast<double>(i) / std::max<double>(static_cast<double>(sines - 1), 1.0);
  }
  // w = m * (b/m)^-e, written with pow here (the library uses exp/log): both are float64.
  const double w = spec.min_timescale * std::pow(spec.base / spec.min_timescale, -e);
  return is_sine ? std::sin(p * w) : std::cos(p * w);
}

std::vector<double> table(const posenc::Spec& spec, const std::vector<double>& positions) {
  std::vector<double> out;
  out.reserve(positions.size() * static_cast<std::size_t>(spec.dim));
  for (double p : positions) {
    for (std::int64_t c = 0; c < spec.dim; ++c)
      out.push_back(value(spec, p, c));
  }
  return out;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (!(d <= m)) m = d;  // NaN propagates as a failure
  }
  return m;
}

std::vector<float> encode_at(const posenc::Spec& spec, const std::vector<double>& positions) {
  std::vector<float> out(positions.size() * static_cast<std::size_t>(spec.dim));
  posenc::RowPositions rows;
  rows.count = static_cast<std::int64_t>(positions.size());
  rows.positions = positions.data();
  REQUIRE(posenc::encode(spec, rows, out.data(), out.size()) == posenc::Status::ok);
  return out;
}

std::string describe(const posenc::Spec& spec) {
  return "dim=" + std::to_string(spec.dim) + " base=" + std::to_string(spec.base) +
         " layout=" + (spec.layout == posenc::Layout::split ? "split" : "interleaved") +
         " freq=" + (spec.frequencies == posenc::Frequencies::half ? "half" : "paper") +
         " odd=" + std::to_string(static_cast<int>(spec.odd));
}

namespace {

struct Column {
  std::int64_t frequency = -1;  // -1: a zero column
  bool sine = true;
};

Column column_of(const posenc::Spec& spec, std::int64_t col) {
  const posenc::Columns c = posenc::columns_of(spec);
  Column out;
  if (c.zeros != 0 && col == spec.dim - 1) return out;
  if (spec.layout == posenc::Layout::interleaved) {
    out.frequency = col / 2;
    out.sine = col % 2 == 0;
  } else {
    out.sine = col < c.sines;
    out.frequency = out.sine ? col : col - c.sines;
  }
  return out;
}

}  // namespace

double error_of(double v, double p, double w, bool cosine) {
  const quad x = static_cast<quad>(p) * static_cast<quad>(w);
  const quad e = static_cast<quad>(v) - (cosine ? quad_cos(x) : quad_sin(x));
  return static_cast<double>(e < 0 ? -e : e);
}

namespace {

quad quad_abs(quad x) {
  return x < 0 ? -x : x;
}

// ln x for a finite x > 0: x = 2^e m, sqrt(1/2) <= m < sqrt(2), ln m = 2 atanh(u) with
// u = (m - 1) / (m + 1), |u| <= 0.1716, the series summed until its terms are below 2^-120 of the
// sum; ln 2 from the same series at u = 1/3.
quad atanh_series(quad u) {
  const quad z = u * u;
  quad term = u, sum = u;
  for (int k = 3; quad_abs(term) > quad_abs(sum) * static_cast<quad>(0x1p-120); k += 2) {
    term *= z;
    sum += term / k;
  }
  return 2 * sum;
}

quad ln2() {
  static const quad value = atanh_series(static_cast<quad>(1) / 3);
  return value;
}

quad series_log(quad x) {
  int e = 0;
  quad m = x;
  while (m >= 2) {
    m /= 2;
    ++e;
  }
  while (m < 1) {
    m *= 2;
    --e;
  }
  if (m > static_cast<quad>(1.4142135623730950488)) {
    m /= 2;
    ++e;
  }
  return atanh_series((m - 1) / (m + 1)) + e * ln2();
}

// e^x for |x| < 11000: x = k ln 2 + r, e^r = (e^(r / 16))^16 from the Taylor series (four
// squarings: each doubles the relative error, so few of them keep it near 2^-110).
quad series_exp(quad x) {
  const double k = std::nearbyint(static_cast<double>(x / ln2()));
  const quad r = (x - static_cast<quad>(k) * ln2()) / 16;
  quad term = 1, sum = 1;
  for (int n = 1; quad_abs(term) > static_cast<quad>(0x1p-120); ++n) {
    term = term * r / n;
    sum += term;
  }
  for (int s = 0; s < 4; ++s)
    sum *= sum;
  int ki = static_cast<int>(k);
  for (; ki > 0; --ki)
    sum *= 2;
  for (; ki < 0; ++ki)
    sum /= 2;
  return sum;
}

quad quad_of(QuadFrequency w) {
  return static_cast<quad>(w.hi) + static_cast<quad>(w.lo);
}

}  // namespace

QuadFrequency real_frequency(const posenc::Spec& spec, std::int64_t i) {
  const posenc::Columns c = posenc::columns_of(spec);
  const quad e = spec.frequencies == posenc::Frequencies::paper
                     ? static_cast<quad>(2 * i) / static_cast<quad>(spec.dim)
                     : static_cast<quad>(i) / static_cast<quad>(c.sines > 1 ? c.sines - 1 : 1);
  const quad m = static_cast<quad>(spec.min_timescale);
  const quad range = series_log(static_cast<quad>(spec.base)) - series_log(m);
  const quad w = series_exp(series_log(m) - e * range);
  QuadFrequency q;
  q.hi = static_cast<double>(w);
  q.lo = static_cast<double>(w - static_cast<quad>(q.hi));
  return q;
}

#if defined(__EMSCRIPTEN__)
double series_exp_error(double) {
  return 0.0;
}
double series_log_error(double) {
  return 0.0;
}
#else
double series_exp_error(double x) {
  return static_cast<double>(quad_abs(series_exp(x) / expq(x) - 1));
}
double series_log_error(double x) {
  return static_cast<double>(quad_abs((series_log(x) - logq(x)) / logq(x)));
}
#endif

namespace {

Rounded rounded_of(quad q) {
  Rounded r;
  r.value = static_cast<float>(q);
  const quad f = static_cast<quad>(r.value);
  r.other = std::nextafter(r.value, q > f ? 2.0f : -2.0f);
  const quad mid = (f + static_cast<quad>(r.other)) / 2;
  const quad dist = q > mid ? q - mid : mid - q;
  const quad mag = q < 0 ? -q : q;
  r.tie = q != f && dist <= mag * static_cast<quad>(0x1p-58) + static_cast<quad>(0x1p-72);
  return r;
}

}  // namespace

Rounded rounded_sin_cos(double p, double w, bool cosine) {
  const quad x = static_cast<quad>(p) * static_cast<quad>(w);  // exact: 106 <= 113 bits
  return rounded_of(cosine ? quad_cos(x) : quad_sin(x));
}

double error_of(double v, double p, QuadFrequency w, bool cosine) {
  const quad x = static_cast<quad>(p) * quad_of(w);
  return static_cast<double>(quad_abs(static_cast<quad>(v) - (cosine ? quad_cos(x) : quad_sin(x))));
}

Rounded rounded_sin_cos(double p, QuadFrequency w, bool cosine) {
  const quad x = static_cast<quad>(p) * quad_of(w);
  return rounded_of(cosine ? quad_cos(x) : quad_sin(x));
}

namespace {

// The frequency of a spec's column i as the oracle takes it: the real number (exact_frequencies)
// or the spec's float64.
QuadFrequency oracle_frequency(const posenc::Spec& spec, std::int64_t i) {
  if (spec.exact_frequencies) return real_frequency(spec, i);
  return QuadFrequency{posenc::frequency(spec, i), 0.0};
}

}  // namespace

Rounded rounded(const posenc::Spec& spec, double p, std::int64_t col) {
  const Column c = column_of(spec, col);
  if (c.frequency < 0) return Rounded{};
  return rounded_sin_cos(p, oracle_frequency(spec, c.frequency), !c.sine);
}

std::int64_t count_misrounded(const posenc::Spec& spec, const std::vector<double>& positions,
                              const std::vector<float>& table, std::int64_t* ties) {
  REQUIRE(table.size() == positions.size() * static_cast<std::size_t>(spec.dim));
  std::int64_t bad = 0;
  // Each column's frequency once (the oracle's exp and log are slow in quad precision).
  std::vector<Column> columns;
  std::vector<QuadFrequency> w;
  for (std::int64_t col = 0; col < spec.dim; ++col) {
    columns.push_back(column_of(spec, col));
    const std::int64_t i = columns.back().frequency;
    w.push_back(i < 0 ? QuadFrequency{} : oracle_frequency(spec, i));
  }
  for (std::size_t r = 0; r < positions.size(); ++r) {
    for (std::int64_t col = 0; col < spec.dim; ++col) {
      const auto u = static_cast<std::size_t>(col);
      const Rounded want = columns[u].frequency < 0
                               ? Rounded{}
                               : rounded_sin_cos(positions[r], w[u], !columns[u].sine);
      const float got = table[r * static_cast<std::size_t>(spec.dim) + col];
      if (ties != nullptr && want.tie) ++*ties;
      if (!acceptable(got, want)) {
        if (++bad <= 5) {
          std::printf("  misrounded: %s p=%.17g col=%lld got %.9g want %.9g\n",
                      describe(spec).c_str(), positions[r], static_cast<long long>(col),
                      static_cast<double>(got), static_cast<double>(want.value));
        }
      }
    }
  }
  return bad;
}

}  // namespace oracle
