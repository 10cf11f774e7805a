// Internal checks of tensors shared by the encoder layer and the model.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>

#include "posenc/encoding_error.hpp"

namespace posenc::detail {

// The first element of the row-major tensor data[0, count) that is NaN or infinite, named
// "name[i]" (columns == 0: a vector) or "name[row][column]" (rows of `columns` floats); empty
// when every element is finite.
inline std::string first_non_finite(std::string_view name, const float* data, std::size_t count,
                                    std::size_t columns) {
  for (std::size_t i = 0; i < count; ++i) {
    if (std::isfinite(data[i])) continue;
    std::string element(name);
    if (columns == 0) return element + "[" + integer_text(static_cast<std::int64_t>(i)) + "]";
    return element + "[" + integer_text(static_cast<std::int64_t>(i / columns)) + "][" +
           integer_text(static_cast<std::int64_t>(i % columns)) + "]";
  }
  return {};
}

// a * b, or false when the product does not fit in size_t (32 bits in wasm32, where heads x L x
// L floats of attention can exceed it).
inline bool checked_multiply(std::size_t a, std::size_t b, std::size_t* product) {
  return !__builtin_mul_overflow(a, b, product);
}

}  // namespace posenc::detail
