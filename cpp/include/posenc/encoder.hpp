// posenc: a reusable encoder for one Spec. It computes the spec's frequencies once and keeps
// them; every call then only validates its rows and runs the kernel. The free functions of
// encode.hpp build a temporary Encoder.
//
// How rows are computed (every path within the 2^-22 bound of encode.hpp):
// - 16 or more consecutive rows: angle addition. Rows are grouped in blocks of block_rows()
//   aligned at absolute positions (floor(p) mod block_rows() = j); row a + j is
//   (sin, cos)(a w) rotated by (sin, cos)(j w). The anchor (a) is computed per block in float64;
//   the j table (block_rows() x frequencies, float32) is built on the first such call and shared
//   by copies of the Encoder. A row's value depends only on its position, never on the call.
// - Fewer rows, explicit positions: one float64-reduced float32 sincos per element.
// - Angles above 2^31 (only with large min_timescale or positions beyond 2^24): libm per element.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "posenc/spec.hpp"
#include "posenc/status.hpp"

namespace posenc {

namespace detail {
struct RotationTable;
struct RowTarget;
}  // namespace detail

class Encoder {
 public:
  // An encoder for spec; check status() (validate(spec)) before any other call.
  explicit Encoder(const Spec& spec);

  Status status() const { return status_; }
  const Spec& spec() const { return spec_; }
  const Columns& columns() const { return columns_; }
  // w_i for each sine column i, float64 (frequency()).
  const std::vector<double>& frequencies() const { return frequencies_; }

  // Same contracts as the free functions in encode.hpp.
  Status encode(const RowPositions& rows, float* out, std::size_t out_len) const;
  Status add_to(const RowPositions& rows, float scale, float* embeddings,
                std::size_t embeddings_len) const;
  Status concat(const RowPositions& rows, const float* embeddings, std::size_t embeddings_len,
                std::int64_t embedding_dim, float* out, std::size_t out_len) const;
  Status encode_reference(const RowPositions& rows, float* out, std::size_t out_len) const;

  // Rows per angle-addition block (64, fewer for dim > 4096 so the table stays near 1 MB).
  std::int64_t block_rows() const { return block_rows_; }

 private:
  Status check(const RowPositions& rows, std::size_t len, std::int64_t width) const;
  Status run(const RowPositions& rows, const detail::RowTarget& target) const;
  std::shared_ptr<const detail::RotationTable> rotation_table() const;

  Spec spec_;
  Status status_;
  Columns columns_;
  std::vector<double> frequencies_;
  std::vector<double> padded_frequencies_;  // frequencies_, zero-padded to a multiple of 4
  std::int64_t block_rows_ = 0;
  mutable std::shared_ptr<const detail::RotationTable> table_;  // built on first bulk call
};

}  // namespace posenc
