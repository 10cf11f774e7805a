#include "oracle.hpp"

#include <catch2/catch.hpp>
#include <cmath>

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

}  // namespace oracle
