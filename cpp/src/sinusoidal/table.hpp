// Internal: the layout scatter and row helpers shared by every kernel.
#pragma once

#include <cstdint>
#include <memory>

#include "hot_entry.hpp"
#include "posenc/sinusoidal/encoder.hpp"
#include "posenc/sinusoidal/spec.hpp"
#include "sincos/kernel_math.hpp"

namespace posenc::detail {

// Absolute position of row r.
inline double row_position(const RowPositions& rows, std::int64_t r) {
  return rows.positions != nullptr ? rows.positions[r]
                                   : rows.first_position + static_cast<double>(r);
}

inline bool is_zero_row(const RowPositions& rows, std::int64_t r) {
  return (rows.zero_rows != nullptr && rows.zero_rows[r] != 0) ||
         (rows.zero_position >= 0.0 && row_position(rows, r) == rows.zero_position);
}

// Writes one row from its sines (columns.sines values) and cosines (columns.cosines values) into
// the columns the layout gives them. Add = false stores; Add = true computes
// out_row[c] = out_row[c] * scale + value.
template <bool Add>
inline void scatter_row(const Spec& spec, const Columns& columns, const float* sines,
                        const float* cosines, float scale, float* out_row) {
  const std::int64_t ns = columns.sines, nc = columns.cosines;
  auto put = [&](std::int64_t c, float v) {
    if constexpr (Add) {
      out_row[c] = out_row[c] * scale + v;
    } else {
      out_row[c] = v;
    }
  };
  if (spec.layout == Layout::interleaved) {
    POSENC_NO_UNROLL_OR_VECTORIZE
    for (std::int64_t i = 0; i < nc; ++i) {
      put(2 * i, sines[i]);
      put(2 * i + 1, cosines[i]);
    }
    if (ns > nc) put(2 * nc, sines[nc]);
  } else {
    POSENC_NO_UNROLL_OR_VECTORIZE
    for (std::int64_t i = 0; i < ns; ++i)
      put(i, sines[i]);
    POSENC_NO_UNROLL_OR_VECTORIZE
    for (std::int64_t i = 0; i < nc; ++i)
      put(ns + i, cosines[i]);
  }
  if (columns.zeros) put(spec.dim - 1, 0.0f);
}

// The per-spec angle-addition table: for j < rows and frequency i, sin(j w_i) and cos(j w_i)
// in float64 within 2^-53 of the exact values (kernel::sincos_row). Row j holds stride sines then
// stride cosines (stride = frequencies padded to a multiple of 4).
struct RotationTable {
  std::int64_t rows = 0;
  std::int64_t stride = 0;
  std::unique_ptr<double[]> values;
  const double* sines(std::int64_t j) const { return values.get() + 2 * j * stride; }
  const double* cosines(std::int64_t j) const { return sines(j) + stride; }
};

// Builds the table for padded frequencies F (stride entries, w[0] * (rows - 1) <= 2^31).
// Returns nullptr when out of memory.
std::shared_ptr<const RotationTable> build_rotation_table(const SplitFrequencies& F,
                                                          std::int64_t stride, std::int64_t rows);

// Rows per angle-addition block for a spec of dim columns: 128, fewer above dim 512 so that a
// block's rows fit in 256 KB (the JS driver's scratch, which holds whole blocks so that both rows
// of each pair come from one kernel call), never fewer than 8.
std::int64_t block_rows_for(std::int64_t dim);

// Fills sines[i] = sin(p * w_i), cosines[i] = cos(p * w_i) for one row, rounded from float64.
void reference_row(const SinusoidalEncoder& e, double p, float* sines, float* cosines);

}  // namespace posenc::detail
