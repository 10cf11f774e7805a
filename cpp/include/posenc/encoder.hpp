// posenc: a reusable encoder for one Spec. It computes the spec's frequencies once and keeps
// them; every call then only validates its rows and runs the kernel. The free functions of
// encode.hpp build a temporary Encoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "posenc/spec.hpp"
#include "posenc/status.hpp"

namespace posenc {

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

 private:
  Status check(const RowPositions& rows, std::size_t len, std::int64_t width) const;

  Spec spec_;
  Status status_;
  Columns columns_;
  std::vector<double> frequencies_;
};

}  // namespace posenc
