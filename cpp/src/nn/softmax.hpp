// The masked softmax of one row of attention scores, and ALiBi's bias on such a row. Internal to
// the core. Two builds of the same arithmetic, like gemm.hpp: softmax_row() (wasm SIMD f32x4 under
// __wasm_simd128__) and softmax_row_scalar() (the plain reference, always compiled); their results
// are bitwise identical (tested).
#pragma once

#include <cstdint>

#include "posenc/nn/position_step.hpp"

namespace posenc::detail {

// e^x in float32 for x <= 0 (Cephes expf: x = n ln2 + r, |r| <= ln2/2, a degree-6 polynomial,
// then 2^n; float32 multiplies and adds, no fused multiply-add): within 2 ulp of e^x for
// x >= -87.3, and 0 below (where e^x is a denormal, < 1.2e-38). Every element on its own: the same
// x gives the same bits wherever it sits in a row.
float exp_nonpositive(float x);

// Softmax over the visible entries of row[0, count) (plus bias[0, count) first when bias is not
// null: the ALiBi table, added in the same pass): entry c is visible when key_pos is null or
// key_pos[c] <= last. Visible entries become e^(s - max) times the float32 reciprocal of the sum
// (within 1 ulp of e^(s - max) / sum), hidden ones and row[count, n) become 0; a row with no
// visible entry is all 0. The sum is float64, accumulated in four partial sums (entry c into sum
// c mod 4, in order of c, then (s0 + s1) + (s2 + s3)): the result depends on the order of the
// entries, not on where a row sits.
void softmax_row(float* row, std::int64_t n, std::int64_t count, const std::int32_t* key_pos,
                 std::int32_t last, const float* bias = nullptr);
void softmax_row_scalar(float* row, std::int64_t n, std::int64_t count, const std::int32_t* key_pos,
                        std::int32_t last, const float* bias = nullptr);

// ALiBi's bias by key row minus query row for consecutive positions: table[u] =
// float32(-slope * distance) with p_query - p_key = (l - 1) - u, u = 0 .. 2l - 2, so that query i's
// bias for key row j is table[l - 1 - i + j], a contiguous slice. Equal to add_alibi_bias() on
// positions offset + row (their differences are exact).
void alibi_distance_table(float* table, std::int64_t l, double slope, AlibiMode mode);

// row[c] += float32(-slope * distance) for c < count, distance = query_position - key_positions[c]
// (causal mode: 0 when negative) or its absolute value (symmetric mode), in float64.
void add_alibi_bias(float* row, std::int64_t count, const double* key_positions,
                    double query_position, double slope, AlibiMode mode);

}  // namespace posenc::detail
