// posenc: ALiBi, attention with linear biases (Press, Smith and Lewis, "Train Short, Test Long",
// 2022): no position vectors at all; head h adds -m_h * distance to its attention scores.
//
// Slopes are float64, exactly the paper code's get_slopes (ofirpress/attention_with_linear_biases,
// fairseq/models/transformer.py): for n a power of 2, start = 2^(-2^-(log2 n - 3)) = 2^(-8/n) and
// m_i = start * start^i (i < n, Python's float pow); otherwise, with p the largest power of 2
// below n, the slopes of p followed by every other slope of 2p (indices 0, 2, 4, ...), n - p of
// them. The bias is float32: float32(-(m_h * distance)) from the float64 product (distances are
// integers below 2^32, exact in float64), so each value is the correctly rounded float32 of the
// float64 bias; -0.0 at distance 0, as -m * 0 is in IEEE arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>

#include "posenc/encoding_error.hpp"

namespace posenc {

inline constexpr std::int64_t kMaxAlibiHeads = 65536;
inline constexpr std::int64_t kMaxAlibiElements = 2147483647;  // heads * queries * keys
inline constexpr std::int64_t kMaxAlibiOffset = 2147483647;

// Writes the heads slopes (1 <= heads <= kMaxAlibiHeads) to out (out_len must equal heads).
EncodingError alibi_slopes(std::int64_t heads, double* out, std::size_t out_len);

enum class AlibiMode : std::uint8_t {
  // Query i (at absolute position offset + i) and key j: -m (offset + i - j) for j <= offset + i,
  // -infinity for later keys (the causal mask folded in).
  causal,
  // -m |offset + i - j| for every key (encoders, as in the paper's bidirectional variants).
  symmetric,
};

struct AlibiSpec {
  std::int64_t heads = 0;         // 1..kMaxAlibiHeads
  std::int64_t query_length = 0;  // >= 1
  std::int64_t key_length = 0;    // >= 1; heads * query_length * key_length <= kMaxAlibiElements
  AlibiMode mode = AlibiMode::causal;
  std::int64_t offset = 0;  // position of query 0 among the keys (earlier tokens), 0..2^31 - 1
};

EncodingError validate(const AlibiSpec& spec);

// The bias tensor [heads, query_length, key_length], row-major, or a chunk of it: rows
// first_row .. first_row + row_count - 1 of the heads * query_length rows (row h * query_length + i
// holds head h, query i; key_length floats each). out_len must be row_count * key_length.
// Written at memory speed: each row is one or two copies from a per-head table of -m * d.
EncodingError alibi_bias_rows(const AlibiSpec& spec, std::int64_t first_row, std::int64_t row_count,
                              float* out, std::size_t out_len);

// The whole tensor (out_len = heads * query_length * key_length).
EncodingError alibi_bias(const AlibiSpec& spec, float* out, std::size_t out_len);

}  // namespace posenc
