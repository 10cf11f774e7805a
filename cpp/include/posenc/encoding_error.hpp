// posenc: errors of the rotary, ALiBi and 2D sin-cos families. Like Status, returned and never
// thrown; a function that returns an error writes nothing to its outputs. Unlike Status, the error
// carries the exact argument or config key it is about ("headDim", "scaling.factor",
// "config.rope_scaling.factor", "positions[3]") and a full sentence naming what is allowed, since
// a model config has many keys and one enum value per key would not say which.
#pragma once

#include <cstdint>
#include <string>

namespace posenc {

enum class EncodingStatus : std::uint8_t {
  ok = 0,
  invalid_argument,  // an option or argument out of range (named in EncodingError::argument)
  invalid_config,    // a model config (JSON text) that is not JSON, or a key of the wrong type
  invalid_position,  // a position not finite, negative, fractional where integers are needed, or
                     // above the limit
  size_mismatch,     // a buffer length does not match the shape asked for
  out_of_memory,     // a working buffer could not be allocated
};

struct EncodingError {
  EncodingStatus status = EncodingStatus::ok;
  std::string argument;  // "headDim", "config.rope_scaling.factor", ...
  std::string message;   // "config.rope_scaling.factor must be a number >= 1 (got 0.5)"

  bool ok() const { return status == EncodingStatus::ok; }
};

// An error whose message is "<argument> <requirement>", e.g. ("heads", "must be ...").
EncodingError encoding_error(EncodingStatus status, const std::string& argument,
                             const std::string& requirement);

// A number as a message shows it: integers exactly, others to 9 significant digits ("0.5",
// "4096", "1.5e+30", "NaN", "Infinity").
std::string format_number(double v);

// An integer in decimal (what std::to_string does, without linking printf into the wasm).
std::string integer_text(std::int64_t v);

}  // namespace posenc
