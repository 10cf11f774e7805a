#include "table.hpp"

#include <cmath>

namespace posenc::detail {

Table::Table(const Spec& s) : spec(s), columns(columns_of(s)) {
  frequencies.resize(static_cast<std::size_t>(columns.sines));
  double* w = frequencies.data();
  for (std::int64_t i = 0; i < columns.sines; ++i)
    w[i] = frequency(s, i);
}

void reference_row(const Table& t, double p, float* sines, float* cosines) {
  const double* w = t.frequencies.data();
  for (std::int64_t i = 0; i < t.columns.sines; ++i) {
    const double angle = p * w[i];
    sines[i] = static_cast<float>(std::sin(angle));
    if (i < t.columns.cosines) cosines[i] = static_cast<float>(std::cos(angle));
  }
}

}  // namespace posenc::detail
