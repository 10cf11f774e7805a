// posenc: rotary position embedding (RoPE): the frequencies, the cos/sin tables in Hugging Face's
// layout, and the rotation of queries or keys in place.
//
// Angles are always p * w_i in float64 (w_i float64, or HF's float32 buffer widened exactly); the
// sines and cosines are evaluated in float64 (error below 2^-50) and rounded once to float32.
//
// Precision, every build (native, wasm SIMD, wasm baseline), positions p < 2^24:
// - cos_sin: every value within 2^-22 absolute of the float64 value (in practice the correctly
//   rounded float32 of it, barring values within ~2^-45 of a float32 midpoint), times the
//   attention scaling A as HF applies it: float32(float32(cos) * float32(A)) when A != 1.
// - apply: each output within 2^-22 * A * |(x, y)| of the float64 rotation A * R(p w_i) (x, y) of
//   its float32 input pair (x, y).
// Positions up to 2^31 - 1 are accepted (and values stay in [-A, A]); beyond 2^24 the float64 angle
// itself carries more error than a float32 ulp.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "posenc/buffer.hpp"
#include "posenc/encoding_error.hpp"
#include "posenc/half.hpp"
#include "posenc/rotary/spec.hpp"

namespace posenc {

// The frequencies a spec uses for a call whose largest position + 1 is sequence_length (only
// dynamic and longrope depend on it; 0 means "the model's own context": the unscaled / short set).
// inv_freq gets rotary_dim / 2 values w_i (radians per position), *attention_scaling the factor A
// HF multiplies cos and sin by (1 except yarn and longrope). Explicit options (float64 arithmetic)
// without scaling use the formula's real frequencies w_i = base^(-2i/d): inv_freq[i] is the
// nearest double, and with tails the real number is inv_freq[i] + tails[i] (double-double, about
// 2^-100 relative); tails is left empty for every other spec (float32 chains, the scaling rules'
// float64 steps).
EncodingError rotary_frequencies(const RotarySpec& spec, double sequence_length,
                                 std::vector<double>* inv_freq, double* attention_scaling,
                                 std::vector<double>* tails = nullptr);

// The largest position accepted (2^31 - 1); the precision bound holds below 2^24.
inline constexpr double kMaxRotaryPosition = 2147483647.0;
// The most elements (rows * heads * head_dim, or rows * rotary_dim) one call may touch.
inline constexpr std::int64_t kMaxRotaryElements = 2147483647;

// Which rows a call covers. Positions are integers (fractional positions are accepted by apply
// and cos_sin too, computed directly per row).
struct RotaryRows {
  std::int64_t count = 0;             // rows, >= 1
  double first_position = 0.0;        // row r has position first_position + r ...
  const double* positions = nullptr;  // ... or positions[r] when given (count values) ...
  // ... or, for a multimodal spec (mrope_section), three rows of count values (t, then h, then
  // w): frequency i of row r turns by mrope_positions[mrope_row(spec, i) * count + r].
  const double* mrope_positions = nullptr;
  // The largest position + 1 of the whole request, which picks dynamic's and longrope's
  // frequencies as HF does (seq_len = max(position_ids) + 1). 0: taken from these rows. The JS
  // layer passes the request's value so that every chunk of it uses the same frequencies.
  double sequence_length = 0.0;
};

// The last block anchor of a frequency set, kept between calls of a few rows (incremental
// decoding: one row per call, 32 positions per block), so that such a call costs the rotation
// only. Optional; a cache may be passed to any RotaryEmbedding (it keeps a copy of the frequencies
// its anchor belongs to and is refilled on any mismatch), and a row's values are the same bits with
// or without it. Not thread-safe: one per thread. About 32 bytes per rotating pair.
class RotaryAnchorCache {
 public:
  RotaryAnchorCache() = default;
  RotaryAnchorCache(const RotaryAnchorCache&) = delete;
  RotaryAnchorCache& operator=(const RotaryAnchorCache&) = delete;

 private:
  friend class RotaryEmbedding;
  double anchor_ = -1;
  std::int64_t pairs_ = 0;  // padded pair count of the frequencies below
  // Whether those frequencies carry tails (real frequencies: the tails follow from the heads, as
  // only one rule has them, but a float64 set may have the same heads).
  bool tails_ = false;
  Buffer<double> data_;  // frequencies | sin(anchor w) | cos(anchor w)
};

namespace rotary_detail {
struct ApplyTarget;  // where apply's rows go: x and its shape (rotary_rows.cpp)
}  // namespace rotary_detail

class ThreadPool;

class RotaryEmbedding {
 public:
  struct Pending;  // a split call left running (below)

  RotaryEmbedding();
  ~RotaryEmbedding();
  RotaryEmbedding(RotaryEmbedding&&) noexcept;
  RotaryEmbedding& operator=(RotaryEmbedding&&) noexcept;

  // Validates spec (errors named as `names` says), computes its frequencies and the per-block step
  // tables (about 32 * rotary_dim * 8 bytes per frequency set). Until it returns ok, the other
  // calls return an invalid_argument error.
  EncodingError init(const RotarySpec& spec, ArgumentNames names = ArgumentNames::options);

  const RotarySpec& spec() const { return spec_; }  // rotary_dim resolved
  std::int64_t head_dim() const { return spec_.head_dim; }
  std::int64_t rotary_dim() const { return spec_.rotary_dim; }
  // The frequencies and attention scaling of calls whose sequence length does not exceed the
  // original context (for dynamic and longrope; the only set of the other rules).
  const std::vector<double>& inverse_frequencies() const;
  double attention_scaling() const;

  // cos and sin tables of rows.count rows of rotary_dim floats each, HF's layout: half:
  // [w_0 .. w_{n-1}, w_0 .. w_{n-1}] (torch.cat((freqs, freqs))); interleaved: each frequency twice
  // (repeat_interleave). cos_len and sin_len must equal rows.count * rotary_dim.
  // With a pool of several threads, calls of many rows (integer, explicit or multimodal
  // positions; not fractional consecutive ones) split them between its threads: the same bits as
  // on one.
  EncodingError cos_sin(const RotaryRows& rows, float* cos, float* sin, std::size_t cos_len,
                        std::size_t sin_len, RotaryAnchorCache* cache = nullptr,
                        ThreadPool* pool = nullptr, Pending* pending = nullptr) const;

  // cos_sin as float16 / bfloat16 bits (posenc/half.hpp): each value the 16-bit value nearest to
  // the exact cos(p w) or sin(p w), rounded once (with A != 1: the rounding of HF's float32 product
  // float32(cos) * float32(A)). cos and sin each have room for cos_len FLOATS (the float32 tables
  // are written there first and converted in place); their first cos_len uint16 hold the result.
  // Split like cos_sin with a pool of several threads: each share computes its rows in a buffer of
  // its own and converts them into place.
  EncodingError cos_sin_half(const RotaryRows& rows, std::uint16_t* cos, std::uint16_t* sin,
                             std::size_t cos_len, std::size_t sin_len, HalfFormat format,
                             RotaryAnchorCache* cache = nullptr, ThreadPool* pool = nullptr) const;

  // In place on x, rows.count x heads x head_dim floats, row-major ([L, heads, head_dim], as
  // q.transpose(1, 2) of HF's [batch, heads, L, head_dim] for one batch entry): each pair (x, y) of
  // the rotating channels becomes A (x cos - y sin, y cos + x sin), the other channels are left as
  // they are (deinterleave: the pair read at (2i, 2i + 1) is written to (i, i + rotary_dim / 2)).
  // heads >= 1; x_len must equal rows.count * heads * head_dim. With heads_first, x is [heads,
  // rows.count, head_dim] instead (HF's [batch, heads, L, head_dim] for one batch entry, as it is):
  // each head's rows rotate by the same values, the same bits as the [L, heads, head_dim] order.
  EncodingError apply(const RotaryRows& rows, std::int64_t heads, float* x, std::size_t x_len,
                      RotaryAnchorCache* cache = nullptr, ThreadPool* pool = nullptr,
                      bool heads_first = false, Pending* pending = nullptr) const;

  // apply on 16-bit data in place: bits holds x_len float16 / bfloat16 values in apply's shape.
  // Each rotated value is widened to float32, rotated as apply rotates it and rounded back to 16
  // bits (to nearest, ties to even: the 16-bit value nearest to the float32 rotation), a row at a
  // time in a buffer of the call's own (of each share's own when split); the channels beyond
  // rotary_dim are left as they are, bit for bit (as apply leaves them). With a pool of several
  // threads, split like apply.
  EncodingError apply_half(const RotaryRows& rows, std::int64_t heads, std::uint16_t* bits,
                           std::size_t x_len, HalfFormat format, RotaryAnchorCache* cache = nullptr,
                           ThreadPool* pool = nullptr, bool heads_first = false,
                           Pending* pending = nullptr) const;

  // A split cos_sin, apply or apply_half left running on the pool's workers: given as `pending`,
  // such a call returns once its arguments are checked and the workers have its rows, and
  // finish(pending) takes the caller's share of what is left and waits for the rest (the threaded
  // wasm build's pipelined calls copy the previous chunk meanwhile). A call that is not split is
  // done before it returns; finish then returns at once. The embedding and the buffers must stay as
  // they are until finish returns.
  static EncodingError finish(Pending& pending);

 private:
  struct AngleSet;
  // Runs part(begin, end) over [0, count) on pool's threads in chunks of grain rows (false from
  // part: out of memory), keeping temporary (the call's own frequency set) until it is done; with
  // pending, returns at once (see Pending).
  static EncodingError split(ThreadPool* pool, std::int64_t count, std::int64_t grain,
                             std::unique_ptr<AngleSet> temporary,
                             std::function<bool(std::int64_t, std::int64_t)> part,
                             Pending* pending);
  // Whether a call of rows.count rows of row_floats values each is split between pool's threads:
  // the rows of a share at least, or 0 (not split).
  static std::int64_t split_grain(ThreadPool* pool, const RotaryRows& rows,
                                  std::int64_t row_floats);
  // cos_sin_half on pool's threads (split_grain says so).
  EncodingError cos_sin_half_split(const RotaryRows& rows, std::uint16_t* cos, std::uint16_t* sin,
                                   std::size_t cos_len, std::size_t sin_len, HalfFormat format,
                                   ThreadPool* pool) const;
  // cos_sin's rows [begin, end) of rows into c and s (row begin first): a share of a split call.
  bool cos_sin_part(const AngleSet& set, const RotaryRows& rows, std::int64_t begin,
                    std::int64_t end, float a32, bool half, float* c, float* s) const;
  EncodingError check_rows(const RotaryRows& rows, double* sequence_length) const;
  EncodingError check_cos_sin(const RotaryRows& rows, const float* cos, const float* sin,
                              std::size_t cos_len, std::size_t sin_len,
                              double* sequence_length) const;
  EncodingError check_apply(const RotaryRows& rows, std::int64_t heads, const void* x,
                            std::size_t x_len, double* sequence_length) const;
  EncodingError angle_set_for(double sequence_length, const AngleSet** set,
                              std::unique_ptr<AngleSet>* temporary) const;
  // cos_sin of consecutive integer positions within the fast reduction, a block of kBlock rows
  // at a time (scale: HF's float32 attention factor).
  bool cos_sin_blocks(const AngleSet& set, const RotaryRows& rows, float* cos, float* sin,
                      float scale, bool half) const;
  // cos_sin's rows (or, for_apply, apply's values: A applied in float64 before rounding) through
  // for_each_row: times a32 in float32 when it is not 1, in the half layout or interleaved.
  bool cos_sin_rows(const AngleSet& set, const RotaryRows& rows, bool for_apply, float a32,
                    bool half, float* cos, float* sin, RotaryAnchorCache* cache) const;
  // cos_sin_rows of a multimodal spec's three position rows: row r's first `columns` values (rd
  // in the layout, or rd / 2: the half layout's pair values), each column from the position row
  // mrope_row names, written to row r of cos and sin (rd apart), or, with `target`, rotating row
  // r of x.
  // cos_sin_half's exact side of the midpoint f at index i of its cos or sin table.
  int midpoint_side(const RotaryRows& rows, const AngleSet& set, bool cosine, std::size_t i,
                    float f) const;
  bool mrope_rows(const AngleSet& set, const RotaryRows& rows, bool for_apply, float a32, bool half,
                  std::int64_t columns, RotaryAnchorCache* cache, float* cos, float* sin,
                  const rotary_detail::ApplyTarget* target) const;
  // apply and apply_half: x (float32) or bits (16-bit values of format), the other null.
  EncodingError apply_rows(const RotaryRows& rows, std::int64_t heads, float* x,
                           std::uint16_t* bits, std::size_t x_len, HalfFormat format,
                           RotaryAnchorCache* cache, ThreadPool* pool, bool heads_first,
                           Pending* pending) const;
  // apply's rotation of rows into target's x or bits (row r at r * row_stride, head h at h *
  // head_stride; its scratch pointers are set here): each row's values from for_each_row, or from
  // mrope_rows for a multimodal spec's three position rows. False: out of memory.
  bool rotate_rows(const AngleSet& set, const RotaryRows& rows,
                   const rotary_detail::ApplyTarget& target, RotaryAnchorCache* cache) const;
  // Calls row_fn(r, cos, sin) with each row's float32 values (times A when for_apply); when
  // direct_s / direct_c are given, the values are written there (row r at r * direct_stride, np
  // floats: the caller's rows must be that wide).
  template <class RowFn>
  bool for_each_row(const AngleSet& set, const RotaryRows& rows, bool for_apply,
                    RotaryAnchorCache* cache, RowFn row_fn, float* direct_s = nullptr,
                    float* direct_c = nullptr, std::int64_t direct_stride = 0) const;

  RotarySpec spec_;
  bool ready_ = false;
  std::unique_ptr<AngleSet> base_set_;  // the default / short / unscaled set
  std::unique_ptr<AngleSet> long_set_;  // longrope's long_factor set
};

struct RotaryEmbedding::Pending {
  Pending();
  ~Pending();
  Pending(const Pending&) = delete;
  Pending& operator=(const Pending&) = delete;

  ThreadPool* pool = nullptr;  // the pool running the call; nullptr: nothing is running
  std::function<bool(std::int64_t, std::int64_t)> part;  // rows [begin, end)
  std::unique_ptr<AngleSet> temporary;                   // the call's own frequency set
  std::atomic<bool> failed{false};                       // a part ran out of memory
};

}  // namespace posenc
