// float16 / bfloat16 outputs (posenc/half.hpp, issue 25): the conversion kernel against a plain
// double-based reference and its SIMD form against the scalar one (every float32 class), the
// midpoint fix-up, and the sinusoidal encoder's side decision (SinusoidalEncoder::exact_side)
// against the quad-precision oracle at every midpoint of large random tables.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "oracle.hpp"
#include "posenc/half.hpp"
#include "posenc/posenc.hpp"

using posenc::HalfFormat;

namespace {

float float_of(std::uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// v (>= 0, finite) to an integer, ties to even.
double round_half_even(double v) {
  const double f = std::floor(v);
  const double d = v - f;
  return d > 0.5 || (d == 0.5 && std::fmod(f, 2.0) == 1.0) ? f + 1 : f;
}

// The reference: the 16-bit bits of x from its value (not its bits), and whether x is a midpoint.
std::uint16_t reference(float x, HalfFormat format, bool& midpoint) {
  midpoint = false;
  const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const bool bf = format == HalfFormat::bfloat16;
  if (std::isnan(x)) return sign | (bf ? 0x7fc0 : 0x7e00);
  const double a = std::fabs(static_cast<double>(x));
  const int bits = bf ? 8 : 11, min_exp = bf ? -133 : -24;
  const double limit = bf ? 0x1.ffp127 : 65520.0;  // the overflow thresholds
  if (std::isinf(x) || a > limit) return sign | (bf ? 0x7f80 : 0x7c00);
  if (a == 0) return sign;
  int e = std::ilogb(a);
  const double q = std::ldexp(1.0, std::max(e - bits + 1, min_exp));  // spacing at a
  const double scaled = a / q;                                        // exact
  midpoint = scaled - std::floor(scaled) == 0.5;
  const double r = round_half_even(scaled) * q;
  if (r >= (bf ? 0x1p128 : 65536.0)) return sign | (bf ? 0x7f80 : 0x7c00);
  if (bf) {
    const float rf = static_cast<float>(r);
    std::uint32_t b;
    std::memcpy(&b, &rf, sizeof b);
    return sign | static_cast<std::uint16_t>(b >> 16);
  }
  if (r < 0x1p-14) return sign | static_cast<std::uint16_t>(r * 0x1p24);
  e = std::ilogb(r);
  return sign | static_cast<std::uint16_t>(((e + 15) << 10) |
                                           static_cast<int>(std::ldexp(r, 10 - e) - 1024));
}

// Every 4099th float32 bit pattern (both signs, all exponents, NaNs, infinities) plus the edges.
std::vector<float> sample_floats() {
  std::vector<float> v;
  for (std::uint64_t b = 0; b <= 0xffffffffu; b += 4099)
    v.push_back(float_of(static_cast<std::uint32_t>(b)));
  for (std::uint32_t b :
       {0x0u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x477fe000u, 0x477ff000u,
        0x477ff001u, 0x38800000u, 0x387ff000u, 0x33000000u, 0x33000001u, 0x7f7f8000u, 0x7f7f7fffu,
        0x7f7fffffu, 0x00008000u, 0x3f808000u, 0x3f818000u}) {
    v.push_back(float_of(b));
    v.push_back(float_of(b | 0x80000000u));
  }
  // Midpoints of both formats at every exponent, and float16 subnormal midpoints (2k+1) 2^-25.
  for (std::uint32_t e = 0; e < 255; ++e) {
    for (std::uint32_t m : {0u, 1u, 2u, 0x155u, 0x3ffu}) {
      v.push_back(float_of((e << 23) | (m << 13) | 0x1000u));
      v.push_back(float_of(0x80000000u | (e << 23) | (m << 16) | 0x8000u));
    }
  }
  for (int k = 0; k < 2048; k += 7)
    v.push_back(static_cast<float>(2 * k + 1) * 0x1p-25f);
  return v;
}

}  // namespace

TEST_CASE("to_half: nearest float16 / bf16 bits and the midpoints, SIMD equal to scalar",
          "[half]") {
  const std::vector<float> in = sample_floats();
  const std::size_t n = in.size();
  for (HalfFormat format : {HalfFormat::float16, HalfFormat::bfloat16}) {
    std::vector<std::uint16_t> scalar(n), simd(n);
    std::vector<std::uint32_t> mids_scalar(n), mids_simd(n);
    const std::size_t count =
        posenc::to_half_scalar(in.data(), scalar.data(), n, format, mids_scalar.data());
    // Every length mod 8 and offset: the SIMD tails.
    for (std::size_t start : {0, 1, 5}) {
      const std::size_t m = n - start;
      const std::size_t got =
          posenc::to_half(in.data() + start, simd.data(), m, format, mids_simd.data());
      std::size_t want = 0;
      for (std::size_t k = 0; k < count; ++k)
        want += mids_scalar[k] >= start;
      REQUIRE(got == want);
      for (std::size_t k = 0, j = 0; k < count; ++k) {
        if (mids_scalar[k] >= start) REQUIRE(mids_simd[j++] + start == mids_scalar[k]);
      }
      std::size_t differ = 0;
      for (std::size_t i = 0; i < m; ++i)
        differ += simd[i] != scalar[start + i];
      CHECK(differ == 0);
      // In place (out in in's own bytes), with each midpoint's float32 kept in values: the same
      // bits and midpoints.
      std::vector<float> inplace(in.begin() + static_cast<std::ptrdiff_t>(start), in.end());
      std::vector<std::uint32_t> mids_in_place(m);
      std::vector<float> values(m);
      auto* bits = reinterpret_cast<std::uint16_t*>(inplace.data());
      REQUIRE(posenc::to_half(inplace.data(), bits, m, format, mids_in_place.data(),
                              values.data()) == got);
      differ = 0;
      for (std::size_t i = 0; i < m; ++i)
        differ += bits[i] != simd[i];
      CHECK(differ == 0);
      for (std::size_t j = 0; j < got; ++j) {
        REQUIRE(mids_in_place[j] == mids_simd[j]);
        REQUIRE(std::memcmp(&values[j], &in[start + mids_simd[j]], sizeof(float)) == 0);
      }
    }
    std::size_t wrong = 0, wrong_mid = 0, midpoints = 0, k = 0;
    for (std::size_t i = 0; i < n; ++i) {
      bool midpoint;
      const std::uint16_t want = reference(in[i], format, midpoint);
      const bool listed = k < count && mids_scalar[k] == i;
      k += listed;
      midpoints += midpoint;
      wrong += scalar[i] != want;
      wrong_mid += listed != midpoint;
    }
    INFO("format " << static_cast<int>(format) << ", " << n << " values, " << midpoints
                   << " midpoints");
    CHECK(wrong == 0);
    CHECK(wrong_mid == 0);
    CHECK(midpoints > 50);
  }
}

TEST_CASE("half_bits_for_side: a midpoint goes to the neighbour on the exact value's side",
          "[half]") {
  const std::vector<float> in = sample_floats();
  for (HalfFormat format : {HalfFormat::float16, HalfFormat::bfloat16}) {
    const bool bf = format == HalfFormat::bfloat16;
    for (float f : in) {
      bool midpoint;
      const std::uint16_t nearest = reference(f, format, midpoint);
      CHECK(posenc::half_bits_for_side(f, 0, format) == nearest);
      if (!midpoint) {
        CHECK(posenc::half_bits_for_side(f, 1, format) == nearest);
        continue;
      }
      // The two neighbours as floats: above f on side +1, below on side -1, adjacent.
      const auto value = [&](std::uint16_t h) -> double {
        if (bf) return static_cast<double>(float_of(static_cast<std::uint32_t>(h) << 16));
        const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
        const double mag = e == 31  ? INFINITY
                           : e == 0 ? std::ldexp(m, -24)
                                    : std::ldexp(1024 + m, e - 25);
        return (h & 0x8000) ? -mag : mag;
      };
      const double up = value(posenc::half_bits_for_side(f, 1, format));
      const double down = value(posenc::half_bits_for_side(f, -1, format));
      CHECK(up > f);
      CHECK(down < f);
      CHECK((value(nearest) == up || value(nearest) == down));
    }
  }
}

TEST_CASE("encode_half: the 16-bit value nearest to the exact one, by the quad oracle",
          "[half][exact]") {
  // Random tables of the paper's formula (real frequencies): every value whose float32 is a
  // float16 or bf16 midpoint gets its side from exact_side and from the oracle (which of f -+ a
  // quarter float32 ulp is nearer the quad value). Undecided values are counted (none known).
  // encode_half's table must be to_half's bits of the float32 table with exactly the midpoints
  // set from the oracle's side.
  std::mt19937_64 rng(25);
#ifdef __EMSCRIPTEN__
  const int tables = 6;
#else
  const int tables = 24;
#endif
  std::int64_t checked = 0, undecided = 0, wrong = 0, oracle_ties = 0;
  for (int t = 0; t < tables; ++t) {
    posenc::Spec spec =
        posenc::preset_spec(posenc::Preset::vaswani, 64 + 2 * static_cast<int>(rng() % 200));
    spec.layout = t % 2 ? posenc::Layout::split : posenc::Layout::interleaved;
    const std::int64_t rows = (1 << 20) / spec.dim;
    std::vector<double> positions(static_cast<std::size_t>(rows));
    for (double& p : positions)
      p = static_cast<double>(rng() % (1u << 24));
    const posenc::SinusoidalEncoder enc(spec);
    REQUIRE(enc.status() == posenc::Status::ok);
    posenc::RowPositions r;
    r.count = rows;
    r.positions = positions.data();
    std::vector<float> out(static_cast<std::size_t>(rows * spec.dim));
    REQUIRE(enc.encode(r, out.data(), out.size()) == posenc::Status::ok);
    std::vector<std::uint16_t> bits(out.size()), half(2 * out.size());
    std::vector<std::uint32_t> mids(out.size());
    const std::int64_t sines = enc.columns().sines;
    for (HalfFormat format : {HalfFormat::float16, HalfFormat::bfloat16}) {
      const std::size_t count =
          posenc::to_half(out.data(), bits.data(), out.size(), format, mids.data());
      REQUIRE(enc.encode_half(r, half.data(), out.size(), format) == posenc::Status::ok);
      for (std::size_t k = 0; k < count; ++k) {
        const std::int64_t index = mids[k], row = index / spec.dim, col = index % spec.dim;
        const double p = positions[static_cast<std::size_t>(row)];
        const float f = out[static_cast<std::size_t>(index)];
        const int side = enc.exact_side(p, col, f);
        const bool interleaved = spec.layout == posenc::Layout::interleaved;
        const std::int64_t i = interleaved ? col / 2 : col % sines;
        const bool cosine = interleaved ? col % 2 != 0 : col >= sines;
        const oracle::QuadFrequency w = oracle::real_frequency(spec, i);
        const double quarter = std::fabs(static_cast<double>(f)) * 0x1p-26;
        const double above = oracle::error_of(f + quarter, p, w, cosine);
        const double below = oracle::error_of(f - quarter, p, w, cosine);
        const int want = above < below ? 1 : above > below ? -1 : 0;
        ++checked;
        undecided += side == posenc::kSideUndecided;
        oracle_ties += want == 0;
        wrong += side != posenc::kSideUndecided && want != 0 && side != want;
        bits[static_cast<std::size_t>(index)] = posenc::half_bits_for_side(f, want, format);
      }
      std::size_t differ = 0;
      for (std::size_t i = 0; i < out.size(); ++i)
        differ += half[i] != bits[i];
      CHECK(differ == 0);
    }
  }
  INFO(checked << " midpoints checked");
  CHECK(checked > (tables * 40));
  CHECK(wrong == 0);
  CHECK(undecided == 0);
  CHECK(oracle_ties == 0);
}

TEST_CASE("from_half: every float16 and bf16 pattern widens to its exact float32", "[half]") {
  // All 65536 patterns in one buffer, converted in place and into another buffer at every start
  // offset 0..7 (so each pattern meets every lane of the SIMD groups and the scalar tail); each
  // result against the value computed from the fields (float16: m 2^(e - 25) with the implicit
  // bit, subnormals m 2^-24; infinities and NaNs keep their payload bits).
  for (HalfFormat format : {HalfFormat::float16, HalfFormat::bfloat16}) {
    for (std::uint32_t offset = 0; offset < 16; ++offset) {
      const bool in_place = offset < 8;
      const std::size_t n = 65536 + offset % 8;
      std::vector<std::uint32_t> buf(n);  // room for n floats; the bits in the first n uint16
      std::vector<std::uint16_t> source(n);
      for (std::size_t i = 0; i < n; ++i)
        source[i] = static_cast<std::uint16_t>((i + 65536 - offset % 8) & 0xffff);
      auto* out = reinterpret_cast<float*>(buf.data());
      if (in_place) {
        std::memcpy(buf.data(), source.data(), n * sizeof(std::uint16_t));
        posenc::from_half(reinterpret_cast<const std::uint16_t*>(buf.data()), out, n, format);
      } else {
        posenc::from_half(source.data(), out, n, format);
      }
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t h = source[i];
        std::uint32_t want;
        if (format == HalfFormat::bfloat16) {
          want = h << 16;
        } else {
          const std::uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 31u, m = h & 1023u;
          if (e == 31) {
            want = sign | 0x7f800000u | (m << 13);
          } else {
            const float v =
                e == 0 ? std::ldexp(static_cast<float>(m), -24)
                       : std::ldexp(static_cast<float>(1024 + m), static_cast<int>(e) - 25);
            std::memcpy(&want, &v, sizeof want);
            want |= sign;
          }
        }
        if (buf[i] != want) {
          INFO("format " << static_cast<int>(format) << ", offset " << offset % 8 << ", in place "
                         << in_place << ", bits " << h);
          REQUIRE(buf[i] == want);
        }
      }
    }
  }
}

TEST_CASE("to_half_nearest: to_half's bits, in place and into another buffer", "[half]") {
  // Every class of float32 (both signs, zeros, subnormals, the float16 and bf16 subnormal and
  // normal ranges, midpoints, the overflow thresholds, infinities, NaNs) in runs of every length
  // 0..40 from every start 0..7: the bits equal to_half's (ties to even on the float32 value).
  std::vector<std::uint32_t> patterns;
  for (std::uint32_t e = 0; e < 256; ++e)
    for (std::uint32_t m : {0u, 1u, 0x1000u, 0x1001u, 0x0fffu, 0x8000u, 0x18000u, 0x7fffffu,
                            0x3ff000u, 0x7ff000u, 0x400000u})
      for (std::uint32_t sign : {0u, 0x80000000u})
        patterns.push_back(sign | (e << 23) | m);
  for (std::uint32_t b : {0x477fefffu, 0x477ff000u, 0x477ff001u, 0x7f7f8000u, 0x7f7fffffu})
    patterns.push_back(b);
  for (HalfFormat format : {HalfFormat::float16, HalfFormat::bfloat16}) {
    for (std::size_t start = 0; start < 8; ++start) {
      for (std::size_t n = 0; n <= 40; ++n) {
        for (std::size_t first = 0; first + n <= patterns.size(); first += n + 1) {
          std::vector<float> in(n + 1), place;  // (never empty: memcpy takes no null pointer)
          std::memcpy(in.data(), patterns.data() + first, n * sizeof(float));
          place = in;
          std::vector<std::uint16_t> want(n + 1), out(n + start);
          std::vector<std::uint32_t> midpoints(n + 1);
          posenc::to_half(in.data(), want.data(), n, format, midpoints.data());
          posenc::to_half_nearest(in.data(), out.data() + start, n, format);
          posenc::to_half_nearest(place.data(), reinterpret_cast<std::uint16_t*>(place.data()), n,
                                  format);
          const auto* placed = reinterpret_cast<const std::uint16_t*>(place.data());
          for (std::size_t i = 0; i < n; ++i) {
            INFO("format " << static_cast<int>(format) << ", bits " << patterns[first + i]);
            REQUIRE(out[start + i] == want[i]);
            REQUIRE(placed[i] == want[i]);
          }
        }
      }
    }
  }
}
