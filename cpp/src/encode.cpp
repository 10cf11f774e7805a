// encode, add_to and concat: validation, then one pass over the rows.
#include "posenc/encode.hpp"

#include <cmath>
#include <cstring>
#include <memory>
#include <new>

#include "posenc/encoder.hpp"
#include "table.hpp"

namespace posenc {

namespace {

// Scratch for one row of sines and cosines.
struct RowScratch {
  std::unique_ptr<float[]> data;
  float* sines = nullptr;
  float* cosines = nullptr;
  bool allocate(const Columns& c) {
    data.reset(new (std::nothrow) float[static_cast<std::size_t>(c.sines + c.cosines + 1)]);
    if (!data) return false;
    sines = data.get();
    cosines = sines + c.sines;
    return true;
  }
};

// Calls row_sink(r, sines, cosines) for every non-zero row and zero_sink(r) for padding rows.
template <class RowSink, class ZeroSink>
Status for_each_row(const Encoder& e, const RowPositions& rows, RowSink row_sink,
                    ZeroSink zero_sink) {
  RowScratch scratch;
  if (!scratch.allocate(e.columns())) return Status::out_of_memory;
  for (std::int64_t r = 0; r < rows.count; ++r) {
    if (detail::is_zero_row(rows, r)) {
      zero_sink(r);
      continue;
    }
    detail::reference_row(e, detail::row_position(rows, r), scratch.sines, scratch.cosines);
    row_sink(r, scratch.sines, scratch.cosines);
  }
  return Status::ok;
}

std::vector<double> frequencies_of(const Spec& spec, Status status) {
  std::vector<double> w;
  if (status != Status::ok) return w;
  const Columns c = columns_of(spec);
  w.resize(static_cast<std::size_t>(c.sines));
  double* out = w.data();
  for (std::int64_t i = 0; i < c.sines; ++i)
    out[i] = frequency(spec, i);
  return w;
}

}  // namespace

Encoder::Encoder(const Spec& spec)
    : spec_(spec),
      status_(validate(spec)),
      columns_(status_ == Status::ok ? columns_of(spec) : Columns{}),
      frequencies_(frequencies_of(spec, status_)) {}

Status Encoder::check(const RowPositions& rows, std::size_t len, std::int64_t width) const {
  if (status_ != Status::ok) return status_;
  if (Status s = validate(spec_, rows); s != Status::ok) return s;
  if (width < 1 || rows.count > kMaxElements / width) return Status::invalid_length;
  if (len != static_cast<std::size_t>(rows.count * width)) return Status::size_mismatch;
  return Status::ok;
}

Status Encoder::encode_reference(const RowPositions& rows, float* out, std::size_t out_len) const {
  if (Status s = check(rows, out_len, spec_.dim); s != Status::ok) return s;
  if (out == nullptr) return Status::size_mismatch;
  const std::int64_t d = spec_.dim;
  return for_each_row(
      *this, rows,
      [&](std::int64_t r, const float* s, const float* c) {
        detail::scatter_row<false>(spec_, columns_, s, c, 1.0f, out + r * d);
      },
      [&](std::int64_t r) {
        std::memset(out + r * d, 0, sizeof(float) * static_cast<std::size_t>(d));
      });
}

Status Encoder::encode(const RowPositions& rows, float* out, std::size_t out_len) const {
  return encode_reference(rows, out, out_len);
}

Status Encoder::add_to(const RowPositions& rows, float scale, float* embeddings,
                       std::size_t embeddings_len) const {
  if (Status s = check(rows, embeddings_len, spec_.dim); s != Status::ok) return s;
  if (!std::isfinite(scale)) return Status::invalid_scale;
  if (embeddings == nullptr) return Status::size_mismatch;
  const std::int64_t d = spec_.dim;
  return for_each_row(
      *this, rows,
      [&](std::int64_t r, const float* s, const float* c) {
        detail::scatter_row<true>(spec_, columns_, s, c, scale, embeddings + r * d);
      },
      [&](std::int64_t r) {
        float* row = embeddings + r * d;
        for (std::int64_t i = 0; i < d; ++i)
          row[i] *= scale;
      });
}

Status Encoder::concat(const RowPositions& rows, const float* embeddings,
                       std::size_t embeddings_len, std::int64_t embedding_dim, float* out,
                       std::size_t out_len) const {
  if (status_ != Status::ok) return status_;
  if (embedding_dim < 1 || embedding_dim > kMaxElements - spec_.dim) return Status::invalid_dim;
  const std::int64_t width = embedding_dim + spec_.dim;
  if (Status s = check(rows, out_len, width); s != Status::ok) return s;
  if (embeddings_len != static_cast<std::size_t>(rows.count * embedding_dim)) {
    return Status::size_mismatch;
  }
  if (embeddings == nullptr || out == nullptr) return Status::size_mismatch;
  const std::int64_t d = spec_.dim;
  const std::size_t embedding_bytes = sizeof(float) * static_cast<std::size_t>(embedding_dim);
  auto copy_embedding = [&](std::int64_t r) {
    std::memmove(out + r * width, embeddings + r * embedding_dim, embedding_bytes);
  };
  return for_each_row(
      *this, rows,
      [&](std::int64_t r, const float* s, const float* c) {
        copy_embedding(r);
        detail::scatter_row<false>(spec_, columns_, s, c, 1.0f, out + r * width + embedding_dim);
      },
      [&](std::int64_t r) {
        copy_embedding(r);
        std::memset(out + r * width + embedding_dim, 0,
                    sizeof(float) * static_cast<std::size_t>(d));
      });
}

Status encode(const Spec& spec, const RowPositions& rows, float* out, std::size_t out_len) {
  return Encoder(spec).encode(rows, out, out_len);
}

Status encode_reference(const Spec& spec, const RowPositions& rows, float* out,
                        std::size_t out_len) {
  return Encoder(spec).encode_reference(rows, out, out_len);
}

Status add_to(const Spec& spec, const RowPositions& rows, float scale, float* embeddings,
              std::size_t embeddings_len) {
  return Encoder(spec).add_to(rows, scale, embeddings, embeddings_len);
}

Status concat(const Spec& spec, const RowPositions& rows, const float* embeddings,
              std::size_t embeddings_len, std::int64_t embedding_dim, float* out,
              std::size_t out_len) {
  return Encoder(spec).concat(rows, embeddings, embeddings_len, embedding_dim, out, out_len);
}

}  // namespace posenc
