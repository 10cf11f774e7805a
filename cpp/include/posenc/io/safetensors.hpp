// posenc: a validating reader of the safetensors format (Hugging Face), the file PyTorch users
// export weights to: an 8-byte little-endian header length N, N bytes of JSON
// {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
//  "__metadata__": {"key": "value"}}, then the tensor data (offsets relative to its start).
//
// parse() checks everything before any tensor is read: the header length against the file, the
// JSON (a strict parser bounded in depth and size, safe on any bytes, UTF-8 checked), no key
// twice, no empty tensor name (the error names it ""), each entry's keys and types, the dtype
// (F32, F16 and BF16 are read; other safetensors dtypes are reported as wrong_dtype), that
// shape's element count times the dtype size equals end - begin, and that the ranges tile the
// data exactly as the reference implementation requires: no range outside the data, no two
// overlapping (invalid_offsets), no gap and no bytes after the last (uncovered_data). Errors name
// the tensor. Values are not checked here: NaN and infinities are refused by the model and the
// layer, which name the element.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "posenc/nn/layer_status.hpp"

namespace posenc {

enum class DType : std::uint8_t { f32, f16, bf16 };

// The largest JSON header accepted (the reference implementation's limit is 100 MB).
inline constexpr std::uint64_t kMaxSafetensorsHeader = 16u << 20;

struct TensorInfo {
  std::string name;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;  // empty for a scalar
  std::size_t elements = 0;
  std::size_t begin = 0;  // byte offsets into the data section
  std::size_t end = 0;
};

class SafetensorsFile {
 public:
  // Validates bytes[0, size) and indexes its tensors. The bytes are not copied: they must outlive
  // this object. On error the object is empty.
  LayerError parse(const std::uint8_t* bytes, std::size_t size);

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find(std::string_view name) const;
  // The __metadata__ value for key, or null.
  const std::string* metadata(std::string_view key) const;
  const std::vector<std::pair<std::string, std::string>>& all_metadata() const { return metadata_; }

  // Converts a tensor to float32 (F16 and BF16 exactly; every F16/BF16 value is a float32).
  // count must equal t.elements.
  LayerError read_f32(const TensorInfo& t, float* out, std::size_t count) const;

 private:
  const std::uint8_t* data_ = nullptr;  // start of the data section
  std::size_t data_size_ = 0;
  std::vector<TensorInfo> tensors_;
  std::vector<std::pair<std::string, std::string>> metadata_;
};

// IEEE half and bfloat16 bit patterns to float32 (exact, including subnormals, inf and NaN).
float half_to_float(std::uint16_t bits);
float bfloat16_to_float(std::uint16_t bits);

}  // namespace posenc
