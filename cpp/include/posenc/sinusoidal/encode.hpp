// posenc: computing the table, adding it to embeddings, concatenating it, and the shift rotation.
//
// Precision (encode, add_to, concat; every build; every row with p * w_0 <= 2^31, which is every
// position below 2^24 with the presets): each value is the float32 nearest to sin(p * w_i) /
// cos(p * w_i), where p * w_i is the exact product of the position and the frequency w_i: the
// real number m (b / m)^(-e_i) for specs with exact_frequencies (spec.hpp; carried in
// double-double), else the float64 frequency(spec, i) (no float64 rounding of the angle either
// way). Only when the exact value lies within 2^-73 plus p w_i 2^-100 (plus 2^-95 relative) of a
// float32 midpoint may the other neighbour come back; no such case is known. add_to returns
// fround(fround(emb * scale) + PE) with that PE. Rows beyond 2^31 radians: libm in float64, then
// rounded (no such guarantee). shift_matrix/shift_blocks round libm's float64 sin/cos(k * w_i), not
// covered by this guarantee.
//
// All functions validate their arguments, return a Status, and write nothing when it is not ok.
// Buffers are float32, row-major; lengths are element counts.
#pragma once

#include <cstddef>
#include <cstdint>

#include "posenc/sinusoidal/spec.hpp"
#include "posenc/status.hpp"

namespace posenc {

// Writes rows.count rows of spec.dim columns into out (out_len must be rows.count * spec.dim).
// Row r is PE(position of row r), laid out as spec.layout says; zero_rows are all zero.
Status encode(const Spec& spec, const RowPositions& rows, float* out, std::size_t out_len);

// In place: embeddings[r, c] = embeddings[r, c] * scale + PE(row r)[c], fused (the table is never
// stored). embeddings_len must be rows.count * spec.dim. scale = sqrt(dim) gives the paper's input.
Status add_to(const Spec& spec, const RowPositions& rows, float scale, float* embeddings,
              std::size_t embeddings_len);

// out row r = [embeddings row r (embedding_dim values) | PE(row r) (spec.dim values)].
// embeddings_len must be rows.count * embedding_dim (embedding_dim >= 1), out_len
// rows.count * (embedding_dim + spec.dim).
Status concat(const Spec& spec, const RowPositions& rows, const float* embeddings,
              std::size_t embeddings_len, std::int64_t embedding_dim, float* out,
              std::size_t out_len);

// The relative-position property: PE(p + k) = M_k PE(p) for every p, where M_k is block-diagonal
// with, for frequency w_i, the rotation [[cos kw_i, sin kw_i], [-sin kw_i, cos kw_i]] acting on the
// (sin, cos) column pair of that frequency (wherever the layout puts it). Zero-padding columns map
// to zero. Writes M_k as a dim x dim row-major matrix (out_len = dim * dim), so that
// PE(p + k)[r] = sum_c M[r * dim + c] * PE(p)[c]. k may be negative or fractional (|k| <=
// kMaxPosition). An odd dim under OddDim::paper has a sine column without a cosine partner and is
// rejected (Status::unsupported_shift).
Status shift_matrix(const Spec& spec, double k, float* out, std::size_t out_len);

// The same rotation in compact form: for each frequency i, out[2i] = cos(k w_i) and
// out[2i + 1] = sin(k w_i); out_len must be 2 * columns_of(spec).sines.
Status shift_blocks(const Spec& spec, double k, float* out, std::size_t out_len);

// The scalar float64 reference: one libm sin/cos per element. Slow, and the oracle every fast
// path is tested against. Same contract as encode().
Status encode_reference(const Spec& spec, const RowPositions& rows, float* out,
                        std::size_t out_len);

}  // namespace posenc
