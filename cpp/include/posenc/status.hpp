// posenc: error reporting. The core never throws and never aborts on bad input: every public
// function that can fail returns a Status, and leaves its outputs untouched when it is not ok.
#pragma once

#include <cstdint>

namespace posenc {

enum class Status : std::uint8_t {
  ok = 0,
  invalid_dim,            // dim < 1 (or below the preset's minimum), or > kMaxDim
  odd_dim_rejected,       // dim is odd and the spec's odd-dim policy is `reject`
  invalid_base,           // base not finite, or <= min_timescale, or <= 1
  invalid_min_timescale,  // min_timescale not finite or <= 0
  invalid_layout,         // not a Layout value
  invalid_frequencies,    // not a Frequencies value
  invalid_odd_policy,     // not an OddDim value
  invalid_length,         // row count < 1, or rows * columns > kMaxElements
  invalid_position,       // a position not finite, negative, or > kMaxPosition
  invalid_padding_idx,    // padding_idx < 0 or too large
  size_mismatch,          // a buffer's length does not match the shape asked for
  invalid_scale,          // scale not finite
  unsupported_shift,      // shift of an odd dim under OddDim::paper (a sine column has no cosine)
  invalid_shift,          // shift distance not finite or beyond +-kMaxPosition
  out_of_memory,          // a working buffer could not be allocated
  undecided_rounding,     // a float16 / bf16 value whose rounding the exact path cannot decide
                          // (posenc/half.hpp; none known)
};

// The argument a Status is about ("dim", "base", ...), for error messages.
const char* status_argument(Status s);

// A one-line English description of a Status, naming what is allowed.
const char* status_message(Status s);

}  // namespace posenc
