// posenc: errors of the encoder layer, the model and the safetensors reader. Like Status, these
// are returned, never thrown: the layer code does not throw or abort on bad input, and an object
// that returned an error keeps working (its weights and buffers are untouched).
#pragma once

#include <cstdint>
#include <string>

namespace posenc {

enum class LayerStatus : std::uint8_t {
  ok = 0,
  invalid_config,    // a config field is out of range (the field is named in LayerError::name)
  unknown_tensor,    // a tensor name the layer or model does not have (an extra tensor)
  missing_tensor,    // a required tensor was not given
  wrong_shape,       // a tensor has the wrong shape or element count
  wrong_dtype,       // a safetensors dtype other than F32, F16, BF16
  invalid_length,    // sequence length 0 or above kMaxSequenceLength
  size_mismatch,     // an input or output buffer length does not match L x dModel
  invalid_token,     // a token id < 0 or >= vocabulary size
  not_ready,         // forward before every weight was set (or after a failed load)
  malformed_file,    // safetensors: truncated file, bad header length, header not valid JSON
  invalid_header,    // safetensors: JSON is valid but an entry is not {dtype, shape, data_offsets}
  invalid_offsets,   // safetensors: data_offsets outside the data, overlapping, or wrong size
  invalid_metadata,  // model: __metadata__ missing a key or holding a bad value
  out_of_memory,     // a buffer could not be allocated
  non_finite,        // a weight is NaN or infinite (the name is the element, "norm1.weight[3]")
  uncovered_data,    // safetensors: data bytes no tensor covers (a gap before the named tensor, or
                     // bytes after the last tensor: then the name is "data")
  invalid_position,  // a row position of a forward is not finite or beyond kMaxLayerPosition
  unsupported_metadata,  // model: __metadata__ asks for something the layer cannot do yet
                         // (a non-null rope_scaling)
};

// A one-line English description of a LayerStatus.
const char* layer_status_message(LayerStatus s);

// A LayerStatus with the name of the tensor, config field or argument it is about.
struct LayerError {
  LayerStatus status = LayerStatus::ok;
  std::string name;  // e.g. "self_attn.in_proj_weight", "dModel", "x", "tokens[3]"

  bool ok() const { return status == LayerStatus::ok; }
  // "<name>: <message>" (or only the message when name is empty).
  std::string message() const;
};

inline LayerError layer_error(LayerStatus s, std::string name) {
  return {s, std::move(name)};
}

}  // namespace posenc
