#include "posenc/nn/layer_status.hpp"

namespace posenc {

const char* layer_status_message(LayerStatus s) {
  switch (s) {
    case LayerStatus::ok:
      return "ok";
    case LayerStatus::invalid_config:
      return "invalid layer configuration value";
    case LayerStatus::unknown_tensor:
      return "unknown tensor (not a weight of this layer or model)";
    case LayerStatus::missing_tensor:
      return "missing tensor";
    case LayerStatus::wrong_shape:
      return "tensor has the wrong shape or length";
    case LayerStatus::wrong_dtype:
      return "unsupported dtype (F32, F16 and BF16 are supported)";
    case LayerStatus::invalid_length:
      return "sequence length must be an integer from 1 to 8192";
    case LayerStatus::size_mismatch:
      return "array length does not match length x dModel";
    case LayerStatus::invalid_token:
      return "token id out of range (must be from 0 to vocabSize - 1)";
    case LayerStatus::not_ready:
      return "not ready: weights are missing";
    case LayerStatus::malformed_file:
      return "malformed safetensors file (truncated, bad header length or invalid JSON header)";
    case LayerStatus::invalid_header:
      return "invalid safetensors header entry (a tensor needs exactly dtype, shape and "
             "data_offsets, __metadata__ values must be strings, no key twice)";
    case LayerStatus::invalid_offsets:
      return "safetensors data_offsets outside the data, overlapping, or not matching the shape";
    case LayerStatus::invalid_metadata:
      return "missing or invalid model metadata in __metadata__";
    case LayerStatus::out_of_memory:
      return "not enough memory";
    case LayerStatus::non_finite:
      return "weight is NaN or infinite (weights must be finite)";
    case LayerStatus::uncovered_data:
      return "safetensors data has bytes that no tensor's data_offsets cover (a gap before this "
             "tensor, or, named 'data', bytes after the last tensor)";
    case LayerStatus::invalid_position:
      return "row position must be finite, with absolute value at most 2^31 - 1";
    case LayerStatus::unsupported_metadata:
      return "not supported in the layer yet";
  }
  return "unknown error";
}

std::string LayerError::message() const {
  std::string m = layer_status_message(status);
  return name.empty() ? m : name + ": " + m;
}

}  // namespace posenc
