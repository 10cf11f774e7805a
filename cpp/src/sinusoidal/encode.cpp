// encode, add_to and concat: validation, then one pass over the rows with the fast kernels
// (kernels.hpp); encode_reference keeps the libm-per-element oracle path.
#include "posenc/sinusoidal/encode.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>

#include "posenc/sinusoidal/encoder.hpp"
#include "sincos/kernels.hpp"
#include "sinusoidal/table.hpp"

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
Status for_each_row(const SinusoidalEncoder& e, const RowPositions& rows, RowSink row_sink,
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

// At least 4 entries, so that w[0] exists even without frequencies (dim 1, zero-padded).
std::vector<double> padded(std::vector<double> w) {
  const std::int64_t n = detail::kernel_pad(static_cast<std::int64_t>(w.size()));
  w.resize(static_cast<std::size_t>(std::max<std::int64_t>(n, 4)), 0.0);
  return w;
}

// Consecutive calls of at least this many rows take the angle-addition path.
constexpr std::int64_t kBulkMinRows = 16;
// The angle-addition path needs |p w| <= 2^26 so that the float64 angles p w, a w and j w agree
// to 2^-27 (see encode_rows below).
constexpr double kBulkAngleLimit = 67108864.0;

}  // namespace

namespace detail {

// Where run() puts row r: at out + r * stride + offset; concat first copies the embedding row.
struct RowTarget {
  float* out = nullptr;
  std::int64_t stride = 0;
  std::int64_t offset = 0;
  bool add = false;
  float scale = 1.0f;
  const float* embeddings = nullptr;  // concat only
  std::int64_t embedding_dim = 0;
};

}  // namespace detail

namespace {

// Reads one byte of each 64-byte line of row r of the target (none when r < 0), just before the
// kernel call that writes the neighbouring rows: wasm has no prefetch instruction, and without
// this the stores of the next call miss L1 and wait for their lines. The loads run out of order
// with the current call instead. Measured in Node 20 (bench/run.mjs, 100000 x 512 into a reused
// array): about 2 ms of 32.
volatile unsigned touch_sink;
void touch_row(std::int64_t r, const detail::RowTarget& t, std::int64_t d) {
  if (r < 0) return;
  const auto* row = reinterpret_cast<const unsigned char*>(t.out + r * t.stride + t.offset);
  unsigned acc = 0;
  for (std::int64_t k = 0; k < d * 4; k += 64)
    acc += row[k];
  touch_sink = acc;
}

}  // namespace

SinusoidalEncoder::SinusoidalEncoder(const Spec& spec)
    : spec_(spec),
      status_(validate(spec)),
      columns_(status_ == Status::ok ? columns_of(spec) : Columns{}),
      frequencies_(frequencies_of(spec, status_)),
      padded_frequencies_(padded(frequencies_)),
      block_rows_(status_ == Status::ok ? detail::block_rows_for(spec.dim) : 0) {}

std::shared_ptr<const detail::RotationTable> SinusoidalEncoder::rotation_table() const {
  auto table = std::atomic_load(&table_);
  if (!table) {
    table = detail::build_rotation_table(padded_frequencies_.data(),
                                         static_cast<std::int64_t>(padded_frequencies_.size()),
                                         block_rows_ / 2 + 1);
    if (table) std::atomic_store(&table_, table);
  }
  return table;
}

const float* AnchorCache::anchors(double c, const double* w) {
  std::int64_t slot = 0;
  for (std::int64_t k = 0; k < slots_; ++k) {
    if (starts_[k] == c) {
      used_[k] = ++clock_;
      return values_.get() + 2 * k * stride_;
    }
    if (used_[k] < used_[slot]) slot = k;
  }
  float* s = values_.get() + 2 * slot * stride_;
  detail::kernel::anchors(w, stride_, c, s, s + stride_);
  starts_[slot] = c;
  used_[slot] = ++clock_;
  return s;
}

std::unique_ptr<AnchorCache> SinusoidalEncoder::make_anchor_cache() const {
  if (status_ != Status::ok) return nullptr;
  std::unique_ptr<AnchorCache> cache(new (std::nothrow) AnchorCache());
  if (!cache) return nullptr;
  const std::int64_t stride = static_cast<std::int64_t>(padded_frequencies_.size());
  // At most 8 blocks and 64 KB of anchors (at least one block).
  const std::int64_t slots = std::clamp<std::int64_t>(8192 / stride, 1, 8);
  cache->owner_ = this;
  cache->stride_ = stride;
  cache->slots_ = slots;
  cache->values_.reset(new (std::nothrow) float[static_cast<std::size_t>(2 * slots * stride)]);
  cache->spare_.reset(new (std::nothrow) float[static_cast<std::size_t>(spec_.dim)]());
  cache->starts_.reset(new (std::nothrow) double[static_cast<std::size_t>(slots)]);
  cache->used_.reset(new (std::nothrow) std::uint64_t[static_cast<std::size_t>(slots)]);
  if (!cache->values_ || !cache->spare_ || !cache->starts_ || !cache->used_) return nullptr;
  for (std::int64_t k = 0; k < slots; ++k) {
    cache->starts_[k] = -1.0;
    cache->used_[k] = 0;
  }
  return cache;
}

Status SinusoidalEncoder::check(const RowPositions& rows, std::size_t len,
                                std::int64_t width) const {
  if (status_ != Status::ok) return status_;  // the spec, validated once by the constructor
  if (Status s = validate_rows(spec_, rows); s != Status::ok) return s;
  if (width < 1 || rows.count > kMaxElements / width) return Status::invalid_length;
  if (len != static_cast<std::size_t>(rows.count * width)) return Status::size_mismatch;
  return Status::ok;
}

// The fast paths. Error analysis (u = 2^-25, half a float32 ulp on [0.5, 1); target 8u):
// - Angle addition, row p = c + e (or c - e): inputs (sa, ca) from the float64 sincos of
//   fl(c w), and (se, ce) from that of fl(e w), each pair rounded by unit_pair: the error vector
//   of a pair has norm <= sqrt(5) u (one component within 2u, the other within u). s = sa ce +
//   ca se in float32: by Cauchy-Schwarz the input errors contribute <= sqrt(5) u per pair (the
//   other pair has norm <= 1): 4.47u; the two products <= 1.5u together (|sa ce| + |ca se| <= 1,
//   so at most one of them is in [0.5, 1)), the sum <= u. The angles: |fl(c w) + fl(e w) -
//   fl(p w)| <= 2 |p w| 2^-53 <= 2^-26 = 0.5u for |p w| <= 2^26 (and c w + e w = p w exactly in
//   reals). Total <= 7.47u = 2.23e-7 < 2^-22 = 2.38e-7 (7.1u below position 2^24). Same for the
//   cosine and for c - e. Every value is in [-1, 1] without a clamp (unit_pair).
// - Direct: r (float64-reduced, error ~2^-52) rounded to float32 (<= u), polynomial truncation
//   < 2^-31, its rounding <= 2u: <= 3u.
// - add_to: the same values, then one rounding of out * scale and one of the sum, as the
//   reference does.
Status SinusoidalEncoder::run(const RowPositions& rows, const detail::RowTarget& t,
                              AnchorCache* cache) const {
  const detail::RowLayout L = detail::row_layout(spec_, columns_);
  const double* w = padded_frequencies_.data();
  const std::int64_t stride = static_cast<std::int64_t>(padded_frequencies_.size());
  const std::int64_t d = spec_.dim;

  auto row_out = [&](std::int64_t r) {
    float* base = t.out + r * t.stride;
    if (t.embeddings != nullptr) {
      std::memmove(base, t.embeddings + r * t.embedding_dim,
                   sizeof(float) * static_cast<std::size_t>(t.embedding_dim));
    }
    return base + t.offset;
  };
  auto zero_row = [&](float* row) {
    if (t.add) {
      for (std::int64_t i = 0; i < d; ++i)
        row[i] *= t.scale;
    } else {
      std::memset(row, 0, sizeof(float) * static_cast<std::size_t>(d));
    }
  };

  const double last = detail::row_position(rows, rows.count - 1);
  const std::int64_t B = block_rows_, H = B / 2;
  const bool cached = cache != nullptr && cache->owner_ == this && rows.count < kBulkMinRows;
  if (rows.positions == nullptr && (rows.count >= kBulkMinRows || cached) &&
      (last + static_cast<double>(B)) * w[0] <= kBulkAngleLimit) {
    const auto table = rotation_table();
    // Without a cache: one block's anchors and a spare row (for the partner a kernel call always
    // writes); the cache has its own.
    std::unique_ptr<float[]> own;
    if (!cached) own.reset(new (std::nothrow) float[static_cast<std::size_t>(2 * stride + d)]());
    if (!table || (!cached && !own)) return Status::out_of_memory;
    float* spare = cached ? cache->spare_.get() : own.get() + 2 * stride;
    auto target = [&](std::int64_t r) {
      if (detail::is_zero_row(rows, r)) {
        zero_row(row_out(r));
        return static_cast<float*>(nullptr);
      }
      return row_out(r);
    };
    for (std::int64_t r = 0; r < rows.count;) {
      // Blocks are centred on their anchors, the multiples of B (so position 0 is an anchor and
      // exact): rows r .. r + n - 1 are offsets j0 .. j0 + n - 1 of the block [c - H, c + H),
      // offset j being row c + (j - H).
      const double p = detail::row_position(rows, r);
      const std::int64_t j0 = (static_cast<std::int64_t>(p) + H) % B;
      const std::int64_t n = std::min(B - j0, rows.count - r);
      const double c = p - static_cast<double>(j0 - H);
      const float* sa = nullptr;
      if (cached) {
        sa = cache->anchors(c, w);
      } else {
        detail::kernel::anchors(w, stride, c, own.get(), own.get() + stride);
        sa = own.get();
      }
      const float* ca = sa + stride;
      auto row_at = [&](std::int64_t j) { return j >= j0 && j < j0 + n ? r + (j - j0) : -1; };
      // Outward from the anchor: step e gives rows c + e (e < H) and c - e (e > 0), so both come
      // from one kernel call whenever the call has both.
      for (std::int64_t e = 0; e <= H; ++e) {
        const std::int64_t rp = e < H ? row_at(H + e) : -1, rm = e > 0 ? row_at(H - e) : -1;
        if (rp < 0 && rm < 0) continue;
        if (!t.add) {
          if (e < H - 1) touch_row(row_at(H + e + 1), t, d);
          if (e < H) touch_row(row_at(H - e - 1), t, d);
        }
        float* plus = rp >= 0 ? target(rp) : nullptr;
        float* minus = rm >= 0 ? target(rm) : nullptr;
        if (plus == nullptr && minus == nullptr) continue;
        detail::kernel::rotate_rows(L, sa, ca, table->sines(e), table->cosines(e), t.add, t.scale,
                                    plus != nullptr ? plus : spare,
                                    minus != nullptr ? minus : spare);
      }
      r += n;
    }
    return Status::ok;
  }

  RowScratch scratch;  // for angles beyond the fast reduction only
  for (std::int64_t r = 0; r < rows.count; ++r) {
    float* row = row_out(r);
    const double p = detail::row_position(rows, r);
    if (detail::is_zero_row(rows, r)) {
      zero_row(row);
    } else if (p * w[0] <= detail::kReduceLimit) {
      detail::kernel::direct_row(L, w, p, t.add, t.scale, row);
    } else {
      if (!scratch.data && !scratch.allocate(columns_)) return Status::out_of_memory;
      detail::reference_row(*this, p, scratch.sines, scratch.cosines);
      if (t.add) {
        detail::scatter_row<true>(spec_, columns_, scratch.sines, scratch.cosines, t.scale, row);
      } else {
        detail::scatter_row<false>(spec_, columns_, scratch.sines, scratch.cosines, 1.0f, row);
      }
    }
  }
  return Status::ok;
}

Status SinusoidalEncoder::encode_reference(const RowPositions& rows, float* out,
                                           std::size_t out_len) const {
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

Status SinusoidalEncoder::encode(const RowPositions& rows, float* out, std::size_t out_len,
                                 AnchorCache* cache) const {
  if (Status s = check(rows, out_len, spec_.dim); s != Status::ok) return s;
  if (out == nullptr) return Status::size_mismatch;
  detail::RowTarget t;
  t.out = out;
  t.stride = spec_.dim;
  return run(rows, t, cache);
}

Status SinusoidalEncoder::add_to(const RowPositions& rows, float scale, float* embeddings,
                                 std::size_t embeddings_len, AnchorCache* cache) const {
  if (Status s = check(rows, embeddings_len, spec_.dim); s != Status::ok) return s;
  if (!std::isfinite(scale)) return Status::invalid_scale;
  if (embeddings == nullptr) return Status::size_mismatch;
  detail::RowTarget t;
  t.out = embeddings;
  t.stride = spec_.dim;
  t.add = true;
  t.scale = scale;
  return run(rows, t, cache);
}

Status SinusoidalEncoder::concat(const RowPositions& rows, const float* embeddings,
                                 std::size_t embeddings_len, std::int64_t embedding_dim, float* out,
                                 std::size_t out_len, AnchorCache* cache) const {
  if (status_ != Status::ok) return status_;
  if (embedding_dim < 1 || embedding_dim > kMaxElements - spec_.dim) return Status::invalid_dim;
  const std::int64_t width = embedding_dim + spec_.dim;
  if (Status s = check(rows, out_len, width); s != Status::ok) return s;
  if (embeddings_len != static_cast<std::size_t>(rows.count * embedding_dim)) {
    return Status::size_mismatch;
  }
  if (embeddings == nullptr || out == nullptr) return Status::size_mismatch;
  detail::RowTarget t;
  t.out = out;
  t.stride = width;
  t.offset = embedding_dim;
  t.embeddings = embeddings;
  t.embedding_dim = embedding_dim;
  return run(rows, t, cache);
}

Status encode(const Spec& spec, const RowPositions& rows, float* out, std::size_t out_len) {
  return SinusoidalEncoder(spec).encode(rows, out, out_len);
}

Status encode_reference(const Spec& spec, const RowPositions& rows, float* out,
                        std::size_t out_len) {
  return SinusoidalEncoder(spec).encode_reference(rows, out, out_len);
}

Status add_to(const Spec& spec, const RowPositions& rows, float scale, float* embeddings,
              std::size_t embeddings_len) {
  return SinusoidalEncoder(spec).add_to(rows, scale, embeddings, embeddings_len);
}

Status concat(const Spec& spec, const RowPositions& rows, const float* embeddings,
              std::size_t embeddings_len, std::int64_t embedding_dim, float* out,
              std::size_t out_len) {
  return SinusoidalEncoder(spec).concat(rows, embeddings, embeddings_len, embedding_dim, out,
                                        out_len);
}

}  // namespace posenc
