// libFuzzer target: arbitrary bytes become a Spec, RowPositions and a call (encode, add_to,
// concat, shift). Whatever the input, the core must return a Status without crashing, reading or
// writing out of bounds (ASan), or undefined behaviour (UBSan); ok results must be within [-1, 1]
// for encode, match the scalar reference within 2 * 2^-22, and (issues #15, #22) be the float32
// nearest to sin/cos of the exact p * w_i (w_i the real number for exact_frequencies) in every row
// with p * w_0 <= 2^31, checked in quad precision (libquadmath) on up to 4096 values per input; a
// value within 2^-58 relative (+ 2^-72) of a float32 midpoint may be either neighbour. The same
// rows as float16 or bfloat16 (encode_half, issue 25) must be the 16-bit values nearest to the
// exact ones, rounded once, with the same margin around 16-bit midpoints.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" {
#include <quadmath.h>
}

#include "fuzz_reader.hpp"
#include "posenc/half.hpp"
#include "posenc/posenc.hpp"
#include "posenc/sinusoidal/encoder.hpp"

namespace {

// sin or cos of the exact angle p w_i of column col (not a zero column; the spec has sines): w_i
// the real m (b / m)^(-e_i) in quad (exact_frequencies, the paper's formula), or the spec's float64
// (framework presets).
__float128 exact_value(const posenc::Spec& spec, double p, std::int64_t col) {
  const posenc::Columns c = posenc::columns_of(spec);
  std::int64_t i = col / 2;
  bool sine = col % 2 == 0;
  if (spec.layout == posenc::Layout::split) {
    sine = col < c.sines;
    i = sine ? col : col - c.sines;
  }
  __float128 w = posenc::frequency(spec, i);
  if (spec.exact_frequencies) {
    const __float128 m = spec.min_timescale;
    const __float128 e =
        spec.frequencies == posenc::Frequencies::paper
            ? static_cast<__float128>(2 * i) / static_cast<__float128>(spec.dim)
            : static_cast<__float128>(i) / static_cast<__float128>(c.sines > 1 ? c.sines - 1 : 1);
    w = m * powq(static_cast<__float128>(spec.base) / m, -e);
  }
  const __float128 x = static_cast<__float128>(p) * w;
  return sine ? sinq(x) : cosq(x);
}

// Whether v is the correctly rounded float32 of column col at position p (or a tie's neighbour);
// true when the row is beyond the rounding contract (p * w_0 > 2^31, w_0 the largest frequency).
bool correctly_rounded(const posenc::Spec& spec, double p, std::int64_t col, float v) {
  const posenc::Columns c = posenc::columns_of(spec);
  if (c.zeros != 0 && col == spec.dim - 1) return v == 0.0f;
  if (c.sines == 0 || !(p * posenc::frequency(spec, 0) <= 2147483648.0)) return true;
  const __float128 q = exact_value(spec, p, col);
  const float f = static_cast<float>(q);
  if (v == f) return true;
  const __float128 mid = (static_cast<__float128>(f) + static_cast<__float128>(v)) / 2;
  const __float128 dist = fabsq(q - mid);
  return std::nextafter(f, v) == v && dist <= fabsq(q) * 0x1p-58Q + 0x1p-72Q;
}

// The value of 16-bit bits h (float16, or bf16 when bf).
__float128 half_value(std::uint16_t h, bool bf) {
  if (bf) {
    const std::uint32_t b = static_cast<std::uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
  }
  const int e = (h >> 10) & 31, m = h & 1023;
  const __float128 v = e == 0 ? ldexpq(m, -24) : ldexpq(1024 + m, e - 25);
  return (h & 0x8000) != 0 ? -v : v;
}

// Whether h is the 16-bit value nearest to q (ties to even; |q| <= 1 here, so no overflow), or a
// neighbour of a midpoint within 2^-58 relative of q (the float32 check's margin).
bool half_nearest(__float128 q, std::uint16_t h, bool bf) {
  const __float128 a = fabsq(q);
  // One unit in the last place at a: 2^(e - 10) for float16 (2^-24 below 2^-14), 2^(e - 7) bf16.
  const int e = a == 0 ? -200 : static_cast<int>(floorq(log2q(a)));
  const __float128 ulp =
      bf ? ldexpq(1, (e < -126 ? -126 : e) - 7) : ldexpq(1, (e < -14 ? -14 : e) - 10);
  const __float128 n = a / ulp, r = rintq(n);  // rint: ties to even
  const __float128 nearest = (q < 0 ? -r : r) * ulp;
  const __float128 v = half_value(h, bf);
  if (v == nearest) return true;
  return fabsq(fabsq(n - floorq(n)) - 0.5Q) * ulp <= a * 0x1p-58Q + 0x1p-72Q &&
         fabsq(v - nearest) <= ulp * 1.0000001Q;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Reader in{data, size};
  posenc::Spec spec;
  // Keep sizes small enough to run fast, but let every field take hostile values too.
  const std::uint16_t raw_dim = in.take<std::uint16_t>();
  spec.dim = (raw_dim & 0x8000) ? static_cast<std::int16_t>(raw_dim) : raw_dim % 300;
  spec.base = in.take<double>();
  spec.min_timescale = in.take<double>();
  spec.layout = static_cast<posenc::Layout>(in.take<std::uint8_t>() % 3);
  spec.frequencies = static_cast<posenc::Frequencies>(in.take<std::uint8_t>() % 3);
  spec.odd = static_cast<posenc::OddDim>(in.take<std::uint8_t>() % 4);
  const std::uint8_t flags = in.take<std::uint8_t>();
  spec.min_dim = flags % 6;
  spec.exact_frequencies =
      (flags & 0x80) == 0;            // the framework presets' float64 frequencies when set
  if (in.take<std::uint8_t>() & 1) {  // sensible parameters half the time, so encode runs
    spec.base = 10000.0;
    spec.min_timescale = 1.0;
  }

  const std::uint8_t mode = in.take<std::uint8_t>();
  std::int64_t count = static_cast<std::int8_t>(in.take<std::uint8_t>());
  posenc::RowPositions rows;
  rows.count = count;
  rows.first_position = in.take<double>();
  if (mode & 0x10) rows.first_position = std::fmod(std::fabs(rows.first_position), 2.0e7);
  std::vector<double> positions;
  std::vector<std::uint8_t> zero_rows;
  if (count > 0 && (mode & 0x20)) {
    positions.resize(static_cast<std::size_t>(count));
    for (double& p : positions) {
      p = in.take<double>();
      if (mode & 0x10) p = std::fmod(std::fabs(p), 2.0e7);
    }
    rows.positions = positions.data();
  }
  if (count > 0 && (mode & 0x40)) {
    zero_rows.resize(static_cast<std::size_t>(count));
    for (auto& z : zero_rows)
      z = in.take<std::uint8_t>() & 1;
    rows.zero_rows = zero_rows.data();
  }
  if (mode & 0x80) rows.zero_position = in.take<double>();

  const std::size_t want =
      count > 0 && spec.dim > 0 && spec.dim < 100000
          ? static_cast<std::size_t>(count) * static_cast<std::size_t>(spec.dim)
          : 0;
  // Sometimes a wrong length, to exercise size checks.
  const std::size_t len = (mode & 0x08) ? want + (mode & 1) : want;
  std::vector<float> out(len + 1, 7.0f), ref(len + 1, 7.0f);
  switch (mode & 0x07) {
    case 0:
    case 1: {
      const posenc::Status s = posenc::encode(spec, rows, out.data(), len);
      const posenc::Status r = posenc::encode_reference(spec, rows, ref.data(), len);
      if (s != r) std::abort();
      if (s == posenc::Status::ok) {
        for (std::size_t i = 0; i < len; ++i) {
          if (!(out[i] >= -1.0f && out[i] <= 1.0f)) std::abort();
          if (std::fabs(double(out[i]) - ref[i]) > 2.0 / 4194304.0) std::abort();
        }
        const std::size_t d = static_cast<std::size_t>(spec.dim);
        for (std::size_t i = 0; i < len && i < 4096; ++i) {
          const std::size_t r = i / d;
          if (zero_rows.size() > r && zero_rows[r] != 0) continue;
          const double p = rows.positions != nullptr ? rows.positions[r]
                                                     : rows.first_position + static_cast<double>(r);
          if (p == rows.zero_position) continue;
          if (!correctly_rounded(spec, p, static_cast<std::int64_t>(i % d), out[i])) std::abort();
        }
        // The 16-bit table (issue 25): each value rounded once from the exact one, the encoder's
        // exact side deciding where the float32 is a 16-bit midpoint (as quad says).
        const bool bf = (mode & 1) != 0;
        const posenc::SinusoidalEncoder encoder(spec);
        std::vector<std::uint16_t> half(2 * len + 2, 0x7777);
        const posenc::Status h =
            encoder.encode_half(rows, half.data(), len,
                                bf ? posenc::HalfFormat::bfloat16 : posenc::HalfFormat::float16);
        if (h != posenc::Status::ok && h != posenc::Status::undecided_rounding) std::abort();
        for (std::size_t i = 0; h == posenc::Status::ok && i < len && i < 4096; ++i) {
          const std::size_t r = i / d;
          const std::int64_t col = static_cast<std::int64_t>(i % d);
          const bool zero =
              (zero_rows.size() > r && zero_rows[r] != 0) ||
              (rows.positions != nullptr
                   ? rows.positions[r]
                   : rows.first_position + static_cast<double>(r)) == rows.zero_position;
          if (zero || (posenc::columns_of(spec).zeros != 0 && col == spec.dim - 1)) {
            if ((half[i] & 0x7fff) != 0) std::abort();
            continue;
          }
          const double p = rows.positions != nullptr ? rows.positions[r]
                                                     : rows.first_position + static_cast<double>(r);
          if (posenc::columns_of(spec).sines == 0 ||
              !(p * posenc::frequency(spec, 0) <= 2147483648.0))
            continue;
          if (!half_nearest(exact_value(spec, p, col), half[i], bf)) std::abort();
        }
      } else {
        for (std::size_t i = 0; i < len; ++i) {
          if (out[i] != 7.0f) std::abort();  // nothing written on error
        }
      }
      break;
    }
    case 2:
    case 3: {
      const float scale = in.take<float>();
      (void)posenc::add_to(spec, rows, scale, out.data(), len);
      break;
    }
    case 4: {
      const std::int64_t embedding_dim = static_cast<std::int8_t>(in.take<std::uint8_t>());
      std::vector<float> emb(count > 0 && embedding_dim > 0 ? count * embedding_dim : 0, 1.0f);
      std::size_t concat_len = 0;
      if (count > 0 && embedding_dim > 0 && spec.dim > 0 && spec.dim < 100000) {
        concat_len = static_cast<std::size_t>(count * (embedding_dim + spec.dim));
      }
      std::vector<float> joined(concat_len + 1);
      (void)posenc::concat(spec, rows, emb.data(), emb.size(), embedding_dim, joined.data(),
                           concat_len);
      break;
    }
    default: {
      const double k = in.take<double>();
      const std::size_t n = spec.dim > 0 && spec.dim < 300 ? spec.dim * spec.dim : 0;
      std::vector<float> m(n + 1);
      (void)posenc::shift_matrix(spec, k, m.data(), n);
      const std::size_t nb = spec.dim > 0 && spec.dim < 300 ? 2 * ((spec.dim + 1) / 2) : 0;
      std::vector<float> b(nb + 1);
      (void)posenc::shift_blocks(spec, k, b.data(), nb);
      break;
    }
  }
  return 0;
}
