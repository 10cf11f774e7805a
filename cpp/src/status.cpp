#include "posenc/status.hpp"

namespace posenc {

const char* status_argument(Status s) {
  switch (s) {
    case Status::ok:
      return "";
    case Status::invalid_dim:
    case Status::odd_dim_rejected:
      return "dim";
    case Status::invalid_base:
      return "base";
    case Status::invalid_min_timescale:
      return "minTimescale";
    case Status::invalid_layout:
      return "layout";
    case Status::invalid_frequencies:
      return "frequencies";
    case Status::invalid_odd_policy:
      return "odd";
    case Status::invalid_length:
      return "length";
    case Status::invalid_position:
      return "positions";
    case Status::invalid_padding_idx:
      return "paddingIdx";
    case Status::size_mismatch:
      return "buffer";
    case Status::invalid_scale:
      return "scale";
    case Status::unsupported_shift:
      return "dim";
    case Status::invalid_shift:
      return "k";
    case Status::out_of_memory:
      return "length";
    case Status::undecided_rounding:
      return "dtype";
  }
  return "";
}

const char* status_message(Status s) {
  switch (s) {
    case Status::ok:
      return "ok";
    case Status::invalid_dim:
      return "dim must be an integer from the preset's minimum to 65536";
    case Status::odd_dim_rejected:
      return "dim must be even for this encoding (odd: 'reject')";
    case Status::invalid_base:
      return "base must be finite, greater than 1 and than minTimescale";
    case Status::invalid_min_timescale:
      return "minTimescale must be greater than 0, with base / minTimescale and minTimescale * "
             "2^31 finite";
    case Status::invalid_layout:
      return "layout must be 'interleaved' or 'split'";
    case Status::invalid_frequencies:
      return "frequencies must be 'paper' or 'half'";
    case Status::invalid_odd_policy:
      return "odd must be 'paper', 'zero-pad' or 'reject'";
    case Status::invalid_length:
      return "length must be an integer >= 1 with length * dim at most 2^31 - 1 elements";
    case Status::invalid_position:
      return "positions must be finite numbers from 0 to 2^31 - 1";
    case Status::invalid_padding_idx:
      return "paddingIdx must be an integer from 0 to 2^31 - 2";
    case Status::size_mismatch:
      return "a buffer's length does not match the requested shape";
    case Status::invalid_scale:
      return "scale must be a finite number";
    case Status::unsupported_shift:
      return "shift needs a cosine for every sine column: odd dim with odd: 'paper' has none";
    case Status::invalid_shift:
      return "k must be a finite number with |k| at most 2^31 - 1";
    case Status::out_of_memory:
      return "not enough memory for this request";
    case Status::undecided_rounding:
      return "cannot decide the 16-bit rounding of a value (please report this call)";
  }
  return "unknown status";
}

}  // namespace posenc
