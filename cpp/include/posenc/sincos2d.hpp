// posenc: fixed 2D sin-cos position embeddings of vision transformers, one row per patch of an
// height x width grid, in the exact column and row order of two references:
//
// - Sincos2dPreset::mae: facebookresearch/mae util/pos_embed.py, get_2d_sincos_pos_embed. Its grid
//   is np.meshgrid(grid_w, grid_h) (numpy's 'xy' indexing), so grid[0] holds the COLUMN index j
//   and grid[1] the ROW index i, and the half MAE calls emb_h is computed from grid[0]. Patch
//   t = i * width + j gets
//     [sin(j w_k) (k < D/4), cos(j w_k), sin(i w_k), cos(i w_k)],  w_k = 1 / base^(k / (D/4))
//   with w_k the real number of MAE's formula (omega = k / (D/4.); 1. / base**omega), carried in
//   double-double as the paper table's, and each value the float32 nearest to the exact sin / cos
//   (MAE works in float64 throughout; the model copies the table to float32).
//   MAE itself takes a square grid_size; other heights and widths keep the same meshgrid order.
// - Sincos2dPreset::timm: pytorch-image-models timm/layers/pos_embed_sincos.py,
//   build_sincos2d_pos_embed. Its grid is ndgrid ('ij') over feat_shape = [height, width]
//   ([width, height] with reverse_coord): patch t = a * F + b (F the second extent; a is the row
//   index i and b the column index j unless reverse_coord) gets
//     [sin(a b_k) (k < D/4), sin(b b_k), cos(a b_k), cos(b b_k)],  b_k = 1 / base^(k / (D/4))
//   or, with interleave_sin_cos, [sin(a b) | cos(a b) | sin(b b) | cos(b b)] (block-wise),
//   with b_k timm's float32 freq_bands (exponent in float32, float32(base) raised to it in
//   float32, reciprocal; each correctly rounded: the buffer a timm model is built with) and the
//   angles formed in float64 (timm forms them in float32). Against the float64 formula
//   10000^(-k/(D/4)) these bands differ by up to 2^-24 relative, i.e. up to (side - 1) * 2^-24 in
//   the angle.
//
// cls_token: a zero row before the patches (MAE's cls_token=True; also offered for timm).
// dim must be divisible by 4 (both references assert it): an error naming dim otherwise.
// Precision: every value within 2^-22 of the float64 value of the formula with these frequencies
// (in practice the correctly rounded float32 of it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "posenc/buffer.hpp"
#include "posenc/encoding_error.hpp"
#include "posenc/half.hpp"

namespace posenc {

enum class Sincos2dPreset : std::uint8_t { mae, timm };

inline constexpr std::int64_t kMaxSincos2dSide = 65536;
inline constexpr std::int64_t kMaxSincos2dDim = 65536;
inline constexpr std::int64_t kMaxSincos2dElements = 2147483647;

struct Sincos2dSpec {
  std::int64_t height = 0;  // grid rows, 1..kMaxSincos2dSide
  std::int64_t width = 0;   // grid columns, 1..kMaxSincos2dSide
  std::int64_t dim = 0;     // a multiple of 4, 4..kMaxSincos2dDim; rows * dim <= 2^31 - 1
  Sincos2dPreset preset = Sincos2dPreset::mae;
  double base = 10000.0;  // finite, > 1 (MAE's 10000, timm's temperature)
  bool cls_token = false;
  bool reverse_coord = false;       // timm only: the grid over [width, height]
  bool interleave_sin_cos = false;  // timm only: [sin a | cos a | sin b | cos b]
};

EncodingError validate(const Sincos2dSpec& spec);

// A spec's table, made once: the frequencies and the 1D sines and cosines of every coordinate
// 0..max(height, width) - 1 (max(height, width) * dim / 2 floats); rows are then copies.
class Sincos2dTable {
 public:
  EncodingError init(const Sincos2dSpec& spec);
  const Sincos2dSpec& spec() const { return spec_; }
  // (cls ? 1 : 0) + height * width.
  std::int64_t rows() const { return rows_; }
  // The frequencies w_k (MAE) or b_k (timm), dim / 4 values.
  const std::vector<double>& frequencies() const { return frequencies_; }
  // Rows first_row .. first_row + row_count - 1 of the table (out_len = row_count * dim).
  EncodingError write_rows(std::int64_t first_row, std::int64_t row_count, float* out,
                           std::size_t out_len) const;
  // The same rows as float16 / bf16 bits, each the 16-bit value nearest to the exact sin / cos
  // (posenc/half.hpp): the 1D table is converted once per format (its midpoints decided by the
  // double-double path), rows are copies. An error (invalid_argument, "dtype") if a midpoint's
  // side cannot be decided (none known) or the 16-bit table cannot be allocated.
  EncodingError write_rows(std::int64_t first_row, std::int64_t row_count, std::uint16_t* out,
                           std::size_t out_len, HalfFormat format) const;

 private:
  // Rows from a 1D table of `width`-byte values (4: float32, 2: 16-bit bits).
  EncodingError rows_from(const unsigned char* table, std::size_t width, std::int64_t first_row,
                          std::int64_t row_count, unsigned char* out, std::size_t out_len) const;

  Sincos2dSpec spec_;
  std::int64_t rows_ = 0;
  bool ready_ = false;
  std::vector<double> frequencies_;
  std::vector<double> low_;  // the real frequencies' tails (MAE; zeros for timm)
  mutable Buffer<std::uint16_t> half_[2];  // the 1D table per HalfFormat, made on first use
  Buffer<float> table_;  // coordinate p: dim / 4 sines, then dim / 4 cosines
};

// The whole table in one call: out_len = ((cls ? 1 : 0) + height * width) * dim.
EncodingError encode_2d(const Sincos2dSpec& spec, float* out, std::size_t out_len);

}  // namespace posenc
