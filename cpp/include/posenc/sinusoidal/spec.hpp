// posenc: the description of one sinusoidal positional encoding table.
//
// A Spec says which table is meant (its width, frequencies and column layout); a RowPositions
// says which rows of it are wanted. Both are plain values; validate() checks them before any
// kernel runs, so no kernel ever sees an out-of-range size or a non-finite parameter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "posenc/status.hpp"

namespace posenc {

// Column order of the table.
enum class Layout : std::uint8_t {
  // Column 2i holds sin(pos * w_i), column 2i+1 holds cos(pos * w_i) (the paper, PyTorch tutorial).
  interleaved,
  // Columns [0, S) hold sin(pos * w_i), the next C columns cos(pos * w_i): [sin block | cos block]
  // (tensor2tensor, fairseq, Whisper, the TensorFlow tutorial, Marian).
  split,
};

// How the angular frequencies w_0 > w_1 > ... are spaced. With n frequencies and
// m = min_timescale, b = base: w_i = m * (b / m)^(-e_i), where
enum class Frequencies : std::uint8_t {
  paper,  // e_i = 2i / dim                  (the paper: w_i = 10000^(-2i/d) when m = 1)
  half,   // e_i = i / max(n - 1, 1)         (tensor2tensor get_timing_signal_1d, fairseq, Whisper)
};

// What to do when dim is odd.
enum class OddDim : std::uint8_t {
  paper,     // ceil(d/2) sine columns, floor(d/2) cosine columns (the last sine has no cosine)
  zero_pad,  // floor(d/2) sine and cosine columns, the last column is zero (tensor2tensor, fairseq)
  reject,    // an odd dim is an error (Whisper, OpenNMT-tf)
};

// The largest dim accepted. Precision is tested up to 8192.
inline constexpr std::int64_t kMaxDim = 65536;
// Positions (absolute, the number the angle multiplies) must lie in [0, kMaxPosition].
// The 2^-22 precision bound is guaranteed below kPrecisePositionLimit = 2^24; above it the
// float64 angle itself carries more error than a float32 ulp, but every value stays in [-1, 1].
inline constexpr double kMaxPosition = 2147483647.0;         // 2^31 - 1
inline constexpr double kPrecisePositionLimit = 16777216.0;  // 2^24
// The most elements (rows * columns) one call may produce: 2^31 - 1, the largest typed array
// length every JavaScript engine allows for a Float32Array.
inline constexpr std::int64_t kMaxElements = 2147483647;

// One sinusoidal table. Defaults give the paper's table.
struct Spec {
  std::int64_t dim = 0;        // columns of the table, 1..kMaxDim
  double base = 10000.0;       // the longest timescale (max_timescale), finite and > min_timescale
  double min_timescale = 1.0;  // multiplies every frequency (as tensor2tensor does), finite, > 0
  Layout layout = Layout::interleaved;
  Frequencies frequencies = Frequencies::paper;
  OddDim odd = OddDim::paper;
  // Smallest dim allowed (presets whose framework divides by n - 1 need 4).
  std::int64_t min_dim = 1;
  // true (the paper's formula): each w_i is the real number m * (b / m)^(-e_i), e_i the exact
  // rational and m, b the exact values of their doubles, carried in double-double (about 2^-100
  // relative) wherever it multiplies a position: every value is the float32 nearest to sin or cos
  // of the real angle p w_i. false (the framework presets): w_i is the float64 that
  // m * exp(-e_i * ln(b / m)) gives with each step rounded (the exponent, the exponential, the
  // product), what posenc 0.2 and earlier used for every table, and values are correctly rounded
  // for that float64 w_i.
  bool exact_frequencies = true;
};

// Column structure derived from a valid Spec.
struct Columns {
  std::int64_t sines = 0;    // number of sine columns (= number of frequencies)
  std::int64_t cosines = 0;  // number of cosine columns
  std::int64_t zeros = 0;    // 1 when an odd dim is zero-padded, else 0
};

// Checks dim, base, min_timescale and the enums. Returns Status::ok or the first problem.
Status validate(const Spec& spec);

// The column counts of a valid spec (undefined for an invalid one: validate first).
Columns columns_of(const Spec& spec);

// The angular frequency w_i of sine column i (0 <= i < columns_of(spec).sines), in radians per
// position, as a float64: with exact_frequencies, the double nearest to the real w_i (unless the
// real value lies within about 2^-98 relative of a midpoint between doubles); otherwise the float64
// m * exp(-e_i * ln(b / m)), each step rounded.
double frequency(const Spec& spec, std::int64_t i);

// Every w_i: out[i] = frequency(spec, i) for 0 <= i < columns_of(spec).sines, the logarithm taken
// once (exp and log are table-free double-double, about 1 us each in wasm). With out_lo, also
// the low parts: out[i] + out_lo[i] is the real w_i within about 2^-104 |e_i ln(b / m)| relative
// (2^-100 for the paper's 10000; 2^-95 when b / m nears the float64 range)
// (exact_frequencies), or out_lo[i] = 0.
void frequencies(const Spec& spec, double* out, double* out_lo = nullptr);

// Which rows are wanted. Exactly one way of giving positions is used:
// - explicit positions (positions != nullptr): row r has absolute position positions[r];
// - otherwise consecutive positions first_position + r.
// Rows whose zero_rows[r] is nonzero (when zero_rows != nullptr) are all zero, and so are rows at
// zero_position (fairseq padding).
struct RowPositions {
  std::int64_t count = 0;             // number of rows, 1..kMaxElements / columns
  double first_position = 0.0;        // absolute position of row 0 (finite, 0..kMaxPosition)
  const double* positions = nullptr;  // optional, count entries, each finite in [0, kMaxPosition]
  const std::uint8_t* zero_rows = nullptr;  // optional, count entries
  // Rows whose absolute position equals zero_position are all zero: fairseq's table zeroes its
  // padding_idx row. Negative (the default) means no such position.
  double zero_position = -1.0;
};

// Checks the spec (validate(spec)), then the rows against it (validate_rows).
Status validate(const Spec& spec, const RowPositions& rows);

// Checks the rows against a spec that already passed validate(spec): count > 0, count * dim <=
// kMaxElements, every position finite and in [0, kMaxPosition] (for consecutive rows: first and
// last). A SinusoidalEncoder validated its spec once, when made; each call checks only its rows.
Status validate_rows(const Spec& spec, const RowPositions& rows);

// fairseq's make_positions: row r is padding when padding_mask[r] != 0; non-padding rows get
// positions padding_idx + 1, padding_idx + 2, ... counted over non-padding rows only, starting
// after `previous` earlier non-padding tokens. Writes count positions to out and returns
// Status::ok, or an error when padding_idx is negative or a position would exceed kMaxPosition.
Status positions_from_padding_mask(const std::uint8_t* padding_mask, std::int64_t count,
                                   std::int64_t padding_idx, std::int64_t previous, double* out);

// The same numbering from any first position (the JavaScript API's paddingMask, every preset):
// padding rows (padding_mask[r] != 0) get padding_position, the others first, first + 1, ... in
// order. positions_from_padding_mask is first = padding_idx + previous + 1, padding_position =
// padding_idx. Writes count positions to out and returns Status::ok, or invalid_position (writing
// nothing) when first is negative or NaN, padding_position is not in [0, kMaxPosition], or the
// last non-padding position would exceed kMaxPosition.
Status number_around_padding(const std::uint8_t* padding_mask, std::int64_t count, double first,
                             double padding_position, double* out);

}  // namespace posenc
