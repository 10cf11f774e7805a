// posenc: a reusable encoder for one Spec. It computes the spec's frequencies once and keeps
// them; every call then only validates its rows and runs the kernel. The free functions of
// encode.hpp build a temporary SinusoidalEncoder.
//
// Every path returns, for angles p w_i up to 2^31 (all positions below 2^24 with the presets), the
// float32 nearest to sin or cos of the exact product p w_i (encode.hpp, "Precision"), so a row's
// value depends only on its position, never on the path or the call. The paths differ in cost:
// - 16 or more consecutive rows: angle addition in float64. Rows are grouped in blocks of
//   block_rows() = B centred on their anchors c, the multiples of B (rows c - B/2 .. c + B/2 - 1);
//   rows c + e and c - e are (sin, cos)(c w) rotated by (sin, cos)(+-e w), both from one pass
//   over the same four products, then rounded with the hard-case test. The anchor is computed per
//   block; the e table (B/2 + 1 rows x frequencies, float64) is built on the first such call and
//   shared by copies of the SinusoidalEncoder.
// - Fewer rows with an AnchorCache (incremental decoding): the same angle addition, with the
//   block anchors kept in the cache between calls: a rotation per element, plus one anchor per B
//   positions. A block is cached on its second call; a lone row in a block not among the last
//   8 missed takes the direct path (a random access costs no more than explicit positions).
// - Otherwise (explicit positions, lone rows): one float64 sincos of the exact angle per element.
// - Angles above 2^31 (only with large min_timescale or positions beyond 2^24): libm per element,
//   no rounding guarantee.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "posenc/half.hpp"
#include "posenc/sinusoidal/spec.hpp"
#include "posenc/status.hpp"

namespace posenc {

namespace detail {
struct RotationTable;
struct SplitFrequencies;

// Where SinusoidalEncoder::run puts row r: at out + r * stride + offset; concat first copies the
// embedding row.
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

class SinusoidalEncoder;
class ThreadPool;

// A call of encode, add_to or concat left running on a pool's workers (the `pending` argument):
// its rows, where they go and the first failure of a chunk. SinusoidalEncoder::finish waits for it.
struct PendingRows {
  const SinusoidalEncoder* encoder = nullptr;
  RowPositions rows;
  detail::RowTarget target;
  std::atomic<int> failed{0};  // a Status, written by a chunk that failed
};

// Anchors (float64) of recently used blocks, kept between calls of a few consecutive rows
// (incremental decoding, up to a few sequences at once). Made by
// SinusoidalEncoder::make_anchor_cache() for that encoder; passing it to another encoder is allowed
// and simply bypasses it. Not thread-safe: use one per thread. Holds at most 8 blocks and about 64
// KB.
class AnchorCache {
 public:
  AnchorCache(const AnchorCache&) = delete;
  AnchorCache& operator=(const AnchorCache&) = delete;

 private:
  friend class SinusoidalEncoder;
  AnchorCache() = default;
  // Sines then cosines of the anchor at block centre c (stride values each), or nullptr when the
  // block is not cached.
  const double* find(double c);
  // Whether block c missed in one of the last kMissRing misses; records this miss when not.
  bool missed_recently(double c);
  // Caches the anchor at c (computed by fill(values)) in the least recently used slot.
  template <class Fill>
  const double* insert(double c, Fill fill);

  // The content it was made for: the encoder's identity (see SinusoidalEncoder::identity_) and
  // its frequency count. An encoder's address would not do: an encoder assigned a new spec, or a
  // new one built where an old one lived, has the same address and other frequencies.
  std::uint64_t owner_ = 0;
  std::int64_t stride_ = 0;
  std::int64_t slots_ = 0;
  std::unique_ptr<double[]> values_;       // slots_ x (2 * stride_)
  std::unique_ptr<double[]> starts_;       // block centre of each slot, -1 when empty
  std::unique_ptr<std::uint64_t[]> used_;  // last use, for least-recently-used replacement
  std::uint64_t clock_ = 0;
  // Block centres of the last few calls that missed (ring): a block is cached on its second miss.
  static constexpr int kMissRing = 8;
  double missed_[kMissRing] = {-1, -1, -1, -1, -1, -1, -1, -1};
  int next_miss_ = 0;
};

class SinusoidalEncoder {
 public:
  // An encoder for spec; check status() (validate(spec)) before any other call.
  explicit SinusoidalEncoder(const Spec& spec);

  Status status() const { return status_; }
  const Spec& spec() const { return spec_; }
  const Columns& columns() const { return columns_; }
  // w_i for each sine column i, float64 (frequency(): the nearest double for exact frequencies).
  const std::vector<double>& frequencies() const { return frequencies_; }

  // Same contracts as the free functions in encode.hpp. With a cache made by this encoder,
  // calls of fewer than 16 consecutive rows take the angle-addition path too, reusing the
  // cache's anchors (the values are the same on every path: correctly rounded).
  // With a pool of several threads, calls of many rows split them between its threads (each row
  // is computed as on one thread: the same bits). With `pending` too, a split call returns once
  // the workers have it (after the arguments are checked) and finish(pool, pending) waits for it
  // and gives its Status; rows' arrays and the buffers must stay untouched until then. A call that
  // is not split is done before it returns (finish then returns its Status at once).
  Status encode(const RowPositions& rows, float* out, std::size_t out_len,
                AnchorCache* cache = nullptr, ThreadPool* pool = nullptr,
                PendingRows* pending = nullptr) const;
  Status add_to(const RowPositions& rows, float scale, float* embeddings,
                std::size_t embeddings_len, AnchorCache* cache = nullptr,
                ThreadPool* pool = nullptr, PendingRows* pending = nullptr) const;
  Status concat(const RowPositions& rows, const float* embeddings, std::size_t embeddings_len,
                std::int64_t embedding_dim, float* out, std::size_t out_len,
                AnchorCache* cache = nullptr, ThreadPool* pool = nullptr,
                PendingRows* pending = nullptr) const;
  static Status finish(ThreadPool* pool, PendingRows& pending);
  Status encode_reference(const RowPositions& rows, float* out, std::size_t out_len) const;

  // encode's rows as float16 / bf16 bits (posenc/half.hpp), each the 16-bit value nearest to the
  // exact value: out must have room for out_len FLOATS (the float32 rows are written there first
  // and converted in place, block by block); the first out_len uint16 hold the result.
  // Status::undecided_rounding if a midpoint's side cannot be decided (none known).
  Status encode_half(const RowPositions& rows, std::uint16_t* out, std::size_t out_len,
                     HalfFormat format, AnchorCache* cache = nullptr) const;

  // The sign of x - value, x the exact value of column `column` at position `position`
  // (0 <= position <= kMaxPosition, 0 <= column < dim) and value its float32 (what encode wrote
  // there): -1, 0 or +1, or kSideUndecided when the double-double recomputation cannot tell.
  // Only meant for the rare 16-bit midpoints.
  int exact_side(double position, std::int64_t column, float value) const;

  // A cache for this encoder (nullptr when out of memory or when status() is not ok).
  std::unique_ptr<AnchorCache> make_anchor_cache() const;

  // Rows per angle-addition block (128, fewer above dim 512 so a block stays within 256 KB).
  // Calls that cover whole blocks (from a row at c - B/2) compute both rows of every pair at once.
  std::int64_t block_rows() const { return block_rows_; }

 private:
  Status check(const RowPositions& rows, std::size_t len, std::int64_t width) const;
  Status run(const RowPositions& rows, const detail::RowTarget& target, AnchorCache* cache) const;
  // run() over the rows, split between the pool's threads when there are enough of them.
  Status run_split(const RowPositions& rows, const detail::RowTarget& target, AnchorCache* cache,
                   ThreadPool* pool, PendingRows* pending) const;
  static void run_chunk(void* pending, std::int64_t begin, std::int64_t end);
  std::shared_ptr<const detail::RotationTable> rotation_table() const;
  detail::SplitFrequencies split_frequencies() const;

  Spec spec_;
  Status status_;
  Columns columns_;
  std::vector<double> frequencies_;
  // frequencies_ padded to a multiple of 4 (at least 4) with the last frequency: what the
  // kernels read.
  std::vector<double> padded_frequencies_;
  // The low parts of exact frequencies (Spec::exact_frequencies; zeros otherwise), padded alike,
  // and the Dekker low halves of padded_frequencies_ (the direct rows' split, done once).
  std::vector<double> padded_low_;
  std::vector<double> padded_split_low_;
  std::int64_t block_rows_ = 0;
  mutable std::shared_ptr<const detail::RotationTable> table_;  // built on first bulk call
  // Unique per construction and travelling with the content (copies share it, as they share the
  // frequencies): what an AnchorCache checks before it is used.
  std::uint64_t identity_ = 0;
};

}  // namespace posenc
