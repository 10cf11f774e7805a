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

Rounded rounded_sin_cos(double p, double w, bool cosine) {
  Rounded r;
  const quad x = static_cast<quad>(p) * static_cast<quad>(w);  // exact: 106 <= 113 bits
  const quad q = cosine ? quad_cos(x) : quad_sin(x);
  r.value = static_cast<float>(q);
  const quad f = static_cast<quad>(r.value);
  r.other = std::nextafter(r.value, q > f ? 2.0f : -2.0f);
  const quad mid = (f + static_cast<quad>(r.other)) / 2;
  const quad dist = q > mid ? q - mid : mid - q;
  const quad mag = q < 0 ? -q : q;
  r.tie = q != f && dist <= mag * static_cast<quad>(0x1p-58) + static_cast<quad>(0x1p-72);
  return r;
}

Rounded rounded(const posenc::Spec& spec, double p, std::int64_t col) {
  const Column c = column_of(spec, col);
  if (c.frequency < 0) return Rounded{};
  return rounded_sin_cos(p, posenc::frequency(spec, c.frequency), !c.sine);
}

std::int64_t count_misrounded(const posenc::Spec& spec, const std::vector<double>& positions,
                              const std::vector<float>& table, std::int64_t* ties) {
  REQUIRE(table.size() == positions.size() * static_cast<std::size_t>(spec.dim));
  std::int64_t bad = 0;
  for (std::size_t r = 0; r < positions.size(); ++r) {
    for (std::int64_t col = 0; col < spec.dim; ++col) {
      const Rounded want = rounded(spec, positions[r], col);
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
