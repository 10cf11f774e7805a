#include "sinusoidal/table.hpp"

#include <cmath>
#include <new>

#include "sincos/kernels.hpp"
#include "sincos/sincos_double.hpp"

namespace posenc::detail {

void reference_row(const SinusoidalEncoder& e, double p, float* sines, float* cosines) {
  const double* w = e.frequencies().data();
  const std::int64_t ns = e.columns().sines, nc = e.columns().cosines;
  for (std::int64_t i = 0; i < ns; ++i) {
    const double angle = p * w[i];
    double sa, ca;
    sincos_double(angle, sa, ca);
    sines[i] = static_cast<float>(sa);
    if (i < nc) cosines[i] = static_cast<float>(ca);
  }
}

std::shared_ptr<const RotationTable> build_rotation_table(const SplitFrequencies& F,
                                                          std::int64_t stride, std::int64_t rows) {
  auto table = std::make_shared<RotationTable>();
  table->rows = rows;
  table->stride = stride;
  table->values.reset(new (std::nothrow) double[static_cast<std::size_t>(2 * rows * stride)]);
  if (!table->values) return nullptr;
  double* v = table->values.get();
  for (std::int64_t j = 0; j < rows; ++j)
    kernel::sincos_row(F, stride, static_cast<double>(j), v + 2 * j * stride,
                       v + (2 * j + 1) * stride);
  return table;
}

std::int64_t block_rows_for(std::int64_t dim) {
  std::int64_t rows = 128;
  while (rows > 8 && rows * dim > (std::int64_t{1} << 16))
    rows /= 2;
  return rows;
}

}  // namespace posenc::detail
