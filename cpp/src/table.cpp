#include "table.hpp"

#include <cmath>

namespace posenc::detail {

void reference_row(const Encoder& e, double p, float* sines, float* cosines) {
  const double* w = e.frequencies().data();
  const std::int64_t ns = e.columns().sines, nc = e.columns().cosines;
  for (std::int64_t i = 0; i < ns; ++i) {
    const double angle = p * w[i];
    sines[i] = static_cast<float>(std::sin(angle));
    if (i < nc) cosines[i] = static_cast<float>(std::cos(angle));
  }
}

}  // namespace posenc::detail
