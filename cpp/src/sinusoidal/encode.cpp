// encode, add_to and concat: validation, then one pass over the rows with the fast kernels
// (kernels.hpp); encode_reference keeps the libm-per-element oracle path.
#include "posenc/sinusoidal/encode.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>

#include "half/in_place.hpp"
#include "hot_entry.hpp"
#include "posenc/parallel/thread_pool.hpp"
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

// Consecutive calls of at least this many rows take the angle-addition path.
constexpr std::int64_t kBulkMinRows = 16;

}  // namespace

namespace {

// Reads one byte of each 64-byte line of row r of the target (none when r < 0), just before the
// kernel call that writes the neighbouring rows: wasm has no prefetch instruction, and without
// this the stores of the next call miss L1 and wait for their lines. The loads run out of order
// with the current call instead. Measured in Node 20 (bench/run.mjs, 100000 x 512 into a reused
// array): about 2 ms of 32.
// (One sink a thread: threads touch rows at once, and one shared sink would be a data race.)
thread_local volatile unsigned touch_sink;
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
      block_rows_(status_ == Status::ok ? detail::block_rows_for(spec.dim) : 0) {
  // The frequencies and their low parts (zeros unless exact), then the kernels' copies: padded to
  // a multiple of 4 (at least 4, so that w[0] exists even without frequencies: dim 1,
  // zero-padded) by repeating the last frequency, so that padding lanes compute ordinary values
  // (never written) and take the hard-case path no more often than real ones (w[0] stays the
  // largest); and the Dekker low halves of the heads (the direct rows' split, done once).
  const auto n = static_cast<std::size_t>(status_ == Status::ok ? columns_.sines : 0);
  const auto size = static_cast<std::size_t>(
      std::max<std::int64_t>(detail::kernel_pad(static_cast<std::int64_t>(n)), 4));
  std::vector<double> low(n);
  frequencies_.resize(n);
  if (n > 0) posenc::frequencies(spec, frequencies_.data(), low.data());
  padded_frequencies_.resize(size);
  padded_low_.resize(size);
  padded_split_low_.resize(size);
  for (std::size_t i = 0; i < size && n > 0; ++i) {
    const std::size_t k = i < n ? i : n - 1;
    double wh;
    padded_frequencies_[i] = frequencies_[k];
    padded_low_[i] = low[k];
    detail::split(frequencies_[k], wh, padded_split_low_[i]);
  }
  static std::atomic<std::uint64_t> constructed{0};
  identity_ = ++constructed;
}

Status SinusoidalEncoder::encode_half(const RowPositions& rows, std::uint16_t* out,
                                      std::size_t out_len, HalfFormat format,
                                      AnchorCache* cache) const {
  const Status s = encode(rows, reinterpret_cast<float*>(out), out_len, cache);
  if (s != Status::ok) return s;
  // Converted in place; a midpoint's side from the exact value at its row's position and column.
  const std::size_t dim = static_cast<std::size_t>(spec_.dim);
  const auto side = [&](std::size_t i, float f) {
    const std::size_t row = i / dim;
    const double p = rows.positions != nullptr ? rows.positions[row]
                                               : rows.first_position + static_cast<double>(row);
    return exact_side(p, static_cast<std::int64_t>(i % dim), f);
  };
  return detail::to_half_in_place(out, out_len, format, side) ? Status::ok
                                                              : Status::undecided_rounding;
}

int SinusoidalEncoder::exact_side(double position, std::int64_t column, float value) const {
  const std::int64_t sines = columns_.sines;
  std::int64_t i = column;
  bool cosine = false;
  if (spec_.layout == Layout::interleaved) {
    i = column / 2;
    cosine = column % 2 != 0;
  } else if (column >= sines) {
    i = column - sines;
    cosine = true;
  }
  if (i >= sines || (cosine && i >= columns_.cosines)) return value == 0.0f ? 0 : 1;  // zero column
  const auto k = static_cast<std::size_t>(i);
  return detail::exact_side(position, padded_frequencies_[k], padded_low_[k], cosine, value);
}

std::shared_ptr<const detail::RotationTable> SinusoidalEncoder::rotation_table() const {
  auto table = std::atomic_load(&table_);
  if (!table) {
    table = detail::build_rotation_table(split_frequencies(),
                                         static_cast<std::int64_t>(padded_frequencies_.size()),
                                         block_rows_ / 2 + 1);
    if (table) std::atomic_store(&table_, table);
  }
  return table;
}

// Slots are indexed as std::size_t (unique_ptr<T[]>'s index type, 32 bits under wasm32): slots_
// is at most 8.
const double* AnchorCache::find(double c) {
  const auto slots = static_cast<std::size_t>(slots_);
  for (std::size_t k = 0; k < slots; ++k) {
    if (starts_[k] == c) {
      used_[k] = ++clock_;
      return values_.get() + 2 * static_cast<std::int64_t>(k) * stride_;
    }
  }
  return nullptr;
}

bool AnchorCache::missed_recently(double c) {
  for (double m : missed_) {
    if (m == c) return true;
  }
  missed_[next_miss_] = c;
  next_miss_ = (next_miss_ + 1) % kMissRing;
  return false;
}

template <class Fill>
const double* AnchorCache::insert(double c, Fill fill) {
  const auto slots = static_cast<std::size_t>(slots_);
  std::size_t slot = 0;
  for (std::size_t k = 1; k < slots; ++k) {
    if (used_[k] < used_[slot]) slot = k;
  }
  double* s = values_.get() + 2 * static_cast<std::int64_t>(slot) * stride_;
  fill(s);
  starts_[slot] = c;
  used_[slot] = ++clock_;
  return s;
}

detail::SplitFrequencies SinusoidalEncoder::split_frequencies() const {
  detail::SplitFrequencies F;
  F.w = padded_frequencies_.data();
  F.lo = padded_low_.data();
  F.wl = padded_split_low_.data();
  return F;
}

std::unique_ptr<AnchorCache> SinusoidalEncoder::make_anchor_cache() const {
  if (status_ != Status::ok) return nullptr;
  std::unique_ptr<AnchorCache> cache(new (std::nothrow) AnchorCache());
  if (!cache) return nullptr;
  const std::int64_t stride = static_cast<std::int64_t>(padded_frequencies_.size());
  // At most 8 blocks and 64 KB of anchors (at least one block).
  const std::int64_t slots = std::clamp<std::int64_t>(4096 / stride, 1, 8);
  cache->owner_ = identity_;
  cache->stride_ = stride;
  cache->slots_ = slots;
  cache->values_.reset(new (std::nothrow) double[static_cast<std::size_t>(2 * slots * stride)]);
  cache->starts_.reset(new (std::nothrow) double[static_cast<std::size_t>(slots)]);
  cache->used_.reset(new (std::nothrow) std::uint64_t[static_cast<std::size_t>(slots)]);
  if (!cache->values_ || !cache->starts_ || !cache->used_) return nullptr;
  POSENC_NO_UNROLL
  for (std::size_t k = 0; k < static_cast<std::size_t>(slots); ++k) {
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

// The fast paths. Every value is rounded from a float64 v with |v - exact| <= E before rounding,
// with the hard-case test of kernel_math.hpp (step 4) at kHardMargin = 2^-49 >= E:
// - Direct rows (sincos_f64_lite of the exact angle): E <= 2^-51 (kernel_math.hpp,
//   reduce_pio2_lite).
// - The anchors and the e table (sincos_row: steps 1-3): within d = 2^-52 (about one float64
//   ulp, 2^-53, by the analysis; 0.999 * 2^-53 measured against quad precision in
//   test_kernels.cpp; d keeps a factor 2).
// - Angle addition, row p = c + e (or c - e): anchor (sa, ca) and step (se, ce) from sincos_row,
//   each component within d of sin/cos of the exact angles c w and e w (c w + e w = p w exactly
//   in reals, so nothing is lost in the angles). s = sa ce + ca se in float64: the input errors
//   contribute d (|ce| + |se|) + d (|sa| + |ca|) <= 2 sqrt(2) d; the two products are below 1 in
//   magnitude, each rounded by <= 2^-54; the sum by <= 2^-53. E <= (4 sqrt(2) + 2) 2^-53
//   = 7.66 * 2^-53 < 2^-50. Same for the cosine and for c - e.
// - add_to: the correctly rounded value PE, then out = fround(fround(out * scale) + PE), the
//   same roundings as the reference.
// Hard cases (about 1 value in 2^21; every sine at position 0) are recomputed by rounded_exact.
Status SinusoidalEncoder::run(const RowPositions& rows, const detail::RowTarget& t,
                              AnchorCache* cache) const {
  const detail::RowLayout L = detail::row_layout(spec_, columns_);
  const detail::SplitFrequencies F = split_frequencies();
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
      POSENC_NO_UNROLL
      for (std::int64_t i = 0; i < d; ++i)
        row[i] *= t.scale;
    } else {
      std::memset(row, 0, sizeof(float) * static_cast<std::size_t>(d));
    }
  };
  auto target = [&](std::int64_t r) {
    if (detail::is_zero_row(rows, r)) {
      zero_row(row_out(r));
      return static_cast<float*>(nullptr);
    }
    return row_out(r);
  };

  const double last = detail::row_position(rows, rows.count - 1);
  const std::int64_t B = block_rows_, H = B / 2;
  const bool cached = cache != nullptr && cache->owner_ == identity_ &&
                      cache->stride_ == static_cast<std::int64_t>(padded_frequencies_.size()) &&
                      rows.count < kBulkMinRows;
  // Angle addition gives sin(c + e) for the exact real sum c + e, which is the row's position
  // first + r only when that sum is exact: integer positions. A fractional first position whose
  // rows cross a power of 2 would round first + r (found by fuzz_encode), so fractional offsets go
  // row by row.
  if (rows.positions == nullptr && (rows.count >= kBulkMinRows || cached) &&
      rows.first_position == std::floor(rows.first_position) &&
      (last + static_cast<double>(B)) * w[0] <= detail::kReduceLimit) {
    const auto table = rotation_table();
    // Without a cache: one block's anchors; the cache has its own.
    std::unique_ptr<double[]> own;
    if (!cached) own.reset(new (std::nothrow) double[static_cast<std::size_t>(2 * stride)]);
    if (!table || (!cached && !own)) return Status::out_of_memory;
    for (std::int64_t r = 0; r < rows.count;) {
      // Blocks are centred on their anchors, the multiples of B (so position 0 is an anchor):
      // rows r .. r + n - 1 are offsets j0 .. j0 + n - 1 of the block [c - H, c + H), offset j
      // being row c + (j - H).
      const double p = detail::row_position(rows, r);
      const std::int64_t j0 = (static_cast<std::int64_t>(p) + H) % B;
      const std::int64_t n = std::min(B - j0, rows.count - r);
      const double c = p - static_cast<double>(j0 - H);
      auto fill = [&](double* s) { detail::kernel::sincos_row(F, stride, c, s, s + stride); };
      const double* sa = nullptr;
      if (!cached) {
        fill(own.get());
        sa = own.get();
      } else if ((sa = cache->find(c)) == nullptr) {
        if (!cache->missed_recently(c)) {
          // A block not missed recently: a lone row there (a random access) costs less by the
          // direct path than by computing the block's anchor; a second call in the block (a
          // sequence, or several sequences side by side) caches it.
          for (std::int64_t k = 0; k < n; ++k) {
            if (float* row = target(r + k)) {
              detail::kernel::direct_row(L, F, detail::row_position(rows, r + k), t.add, t.scale,
                                         row);
            }
          }
          r += n;
          continue;
        }
        sa = cache->insert(c, fill);
      }
      const double* ca = sa + stride;
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
        const double* sd = table->sines(e);
        const double* cd = table->cosines(e);
        const double de = static_cast<double>(e);
        if (plus != nullptr && minus != nullptr) {
          detail::kernel::rotate_rows(L, F, sa, ca, sd, cd, c, de, t.add, t.scale, plus, minus);
        } else {
          // One row (a call's edge, or a one-row call): half the work of the pair.
          detail::kernel::rotate_row(L, F, sa, ca, sd, cd, c, de, minus != nullptr, t.add, t.scale,
                                     plus != nullptr ? plus : minus);
        }
      }
      r += n;
    }
    return Status::ok;
  }

  RowScratch scratch;  // for angles beyond the fast reduction only, allocated before any row is
                       // written (nothing is written on error)
  for (std::int64_t r = 0; r < rows.count; ++r) {
    if (!detail::is_zero_row(rows, r) &&
        detail::row_position(rows, r) * w[0] > detail::kReduceLimit) {
      if (!scratch.allocate(columns_)) return Status::out_of_memory;
      break;
    }
  }
  for (std::int64_t r = 0; r < rows.count; ++r) {
    float* row = row_out(r);
    const double p = detail::row_position(rows, r);
    if (detail::is_zero_row(rows, r)) {
      zero_row(row);
    } else if (p * w[0] <= detail::kReduceLimit) {
      detail::kernel::direct_row(L, F, p, t.add, t.scale, row);
    } else {
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

// Rows are split between threads in whole angle-addition blocks (block_rows_, counted from row 0:
// the JavaScript chunks start at a block's first row) of at least 64 K values per chunk (waking a
// worker costs tens of microseconds: smaller calls stay on the caller's thread); each
// chunk is run() on its own, without the anchor cache (which serves calls under kBulkMinRows
// rows, never split). A chunk's rows are the same positions: first_position + r is exact for an
// integer first position, so fractional consecutive rows are not split.
Status SinusoidalEncoder::run_split(const RowPositions& rows, const detail::RowTarget& t,
                                    AnchorCache* cache, ThreadPool* pool,
                                    PendingRows* pending) const {
  if (!ThreadPool::kThreaded) return run(rows, t, cache);
  const std::int64_t grain =
      std::max<std::int64_t>(kBulkMinRows, (65536 + spec_.dim - 1) / spec_.dim);
  PendingRows now;
  PendingRows& job = pending != nullptr ? *pending : now;
  job.encoder = nullptr;  // finish(): nothing running
  job.failed = 0;
  if (pool == nullptr || rows.count < 2 * grain ||
      (rows.positions == nullptr && rows.first_position != std::floor(rows.first_position))) {
    return run(rows, t, cache);
  }
  job.encoder = this;
  job.rows = rows;
  job.target = t;
  pool->start_range(rows.count, grain, rows.positions == nullptr ? block_rows_ : 1, &run_chunk,
                    &job);
  return pending != nullptr ? Status::ok : finish(pool, job);
}

void SinusoidalEncoder::run_chunk(void* pending, std::int64_t begin, std::int64_t end) {
  PendingRows& job = *static_cast<PendingRows*>(pending);
  RowPositions part = job.rows;
  part.count = end - begin;
  part.first_position += static_cast<double>(begin);
  if (part.positions != nullptr) part.positions += begin;
  if (part.zero_rows != nullptr) part.zero_rows += begin;
  detail::RowTarget target = job.target;
  target.out += begin * target.stride;
  if (target.embeddings != nullptr) target.embeddings += begin * target.embedding_dim;
  const Status s = job.encoder->run(part, target, nullptr);
  if (s != Status::ok) {
    job.failed.store(static_cast<int>(s), std::memory_order_relaxed);
  }
}

Status SinusoidalEncoder::finish(ThreadPool* pool, PendingRows& pending) {
  if (pending.encoder == nullptr) return Status::ok;
  pool->finish();
  pending.encoder = nullptr;
  return static_cast<Status>(pending.failed.load(std::memory_order_relaxed));
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
                                 AnchorCache* cache, ThreadPool* pool, PendingRows* pending) const {
  if (Status s = check(rows, out_len, spec_.dim); s != Status::ok) return s;
  if (out == nullptr) return Status::size_mismatch;
  detail::RowTarget t;
  t.out = out;
  t.stride = spec_.dim;
  return run_split(rows, t, cache, pool, pending);
}

Status SinusoidalEncoder::add_to(const RowPositions& rows, float scale, float* embeddings,
                                 std::size_t embeddings_len, AnchorCache* cache, ThreadPool* pool,
                                 PendingRows* pending) const {
  if (Status s = check(rows, embeddings_len, spec_.dim); s != Status::ok) return s;
  if (!std::isfinite(scale)) return Status::invalid_scale;
  if (embeddings == nullptr) return Status::size_mismatch;
  detail::RowTarget t;
  t.out = embeddings;
  t.stride = spec_.dim;
  t.add = true;
  t.scale = scale;
  return run_split(rows, t, cache, pool, pending);
}

Status SinusoidalEncoder::concat(const RowPositions& rows, const float* embeddings,
                                 std::size_t embeddings_len, std::int64_t embedding_dim, float* out,
                                 std::size_t out_len, AnchorCache* cache, ThreadPool* pool,
                                 PendingRows* pending) const {
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
  return run_split(rows, t, cache, pool, pending);
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
