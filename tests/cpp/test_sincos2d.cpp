// 2D sin-cos tables against the references' code paths written out literally in float64 (MAE's
// meshgrid(grid_w, grid_h) and concatenations, timm's ndgrid and stack order), square and
// non-square grids, the cls row, chunks, and bad arguments.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "oracle.hpp"
#include "posenc/posenc.hpp"

using namespace posenc;

namespace {

// MAE util/pos_embed.py, step by step for an h x w grid, float64.
std::vector<double> mae_reference(std::int64_t h, std::int64_t w, std::int64_t dim, bool cls) {
  const std::int64_t half = dim / 2, q = half / 2;
  std::vector<double> omega(q);
  for (std::int64_t k = 0; k < q; ++k)
    omega[k] = 1.0 / std::pow(10000.0, static_cast<double>(k) / (static_cast<double>(half) / 2.0));
  // grid = meshgrid(grid_w, grid_h): grid[0][i][j] = j, grid[1][i][j] = i; flattened row-major.
  std::vector<double> out;
  if (cls) out.assign(static_cast<std::size_t>(dim), 0.0);
  for (std::int64_t i = 0; i < h; ++i)
    for (std::int64_t j = 0; j < w; ++j) {
      const double g0 = static_cast<double>(j), g1 = static_cast<double>(i);
      for (std::int64_t k = 0; k < q; ++k)
        out.push_back(std::sin(g0 * omega[k]));  // emb_h = 1d(grid[0]): sin then cos
      for (std::int64_t k = 0; k < q; ++k)
        out.push_back(std::cos(g0 * omega[k]));
      for (std::int64_t k = 0; k < q; ++k)
        out.push_back(std::sin(g1 * omega[k]));  // emb_w = 1d(grid[1])
      for (std::int64_t k = 0; k < q; ++k)
        out.push_back(std::cos(g1 * omega[k]));
    }
  return out;
}

// timm build_sincos2d_pos_embed: pos2 = grid (i, j) x bands; stack([sin, cos], 1).flatten(1).
std::vector<double> timm_reference(std::int64_t h, std::int64_t w, std::int64_t dim,
                                   const std::vector<double>& bands) {
  const std::int64_t q = dim / 4;
  std::vector<double> out;
  for (std::int64_t i = 0; i < h; ++i)
    for (std::int64_t j = 0; j < w; ++j)
      for (int fn = 0; fn < 2; ++fn)             // sin, cos
        for (int coord = 0; coord < 2; ++coord)  // grid[0] = i, grid[1] = j
          for (std::int64_t k = 0; k < q; ++k) {
            const double a = static_cast<double>(coord == 0 ? i : j) * bands[k];
            out.push_back(fn == 0 ? std::sin(a) : std::cos(a));
          }
  return out;
}

}  // namespace

TEST_CASE("2D sin-cos MAE and timm, square and not, cls row, chunks", "[sincos2d]") {
  for (auto hw : {std::pair<std::int64_t, std::int64_t>{14, 14}, {3, 5}, {6, 2}, {1, 1}}) {
    for (std::int64_t dim : {4, 16, 768}) {
      for (bool cls : {false, true}) {
        Sincos2dSpec s;
        s.height = hw.first;
        s.width = hw.second;
        s.dim = dim;
        s.cls_token = cls;
        for (Sincos2dPreset preset : {Sincos2dPreset::mae, Sincos2dPreset::timm}) {
          s.preset = preset;
          Sincos2dTable table;
          REQUIRE(table.init(s).ok());
          const std::int64_t rows = (cls ? 1 : 0) + s.height * s.width;
          CHECK(table.rows() == rows);
          std::vector<float> out(rows * dim);
          REQUIRE(encode_2d(s, out.data(), out.size()).ok());
          std::vector<double> want;
          if (preset == Sincos2dPreset::mae) {
            want = mae_reference(s.height, s.width, dim, cls);
          } else {
            want = timm_reference(s.height, s.width, dim, table.frequencies());
            if (cls) want.insert(want.begin(), static_cast<std::size_t>(dim), 0.0);
          }
          REQUIRE(want.size() == out.size());
          double worst = 0;
          for (std::size_t t = 0; t < out.size(); ++t)
            worst = std::max(worst, std::fabs(out[t] - want[t]));
          INFO("preset " << static_cast<int>(preset) << " h " << s.height << " w " << s.width
                         << " dim " << dim);
          CHECK(worst <= 0x1p-22);
          std::vector<float> chunked(out.size());
          for (std::int64_t r = 0; r < rows; r += 5) {
            const std::int64_t count = rows - r < 5 ? rows - r : 5;
            REQUIRE(table
                        .write_rows(r, count, chunked.data() + r * dim,
                                    static_cast<std::size_t>(count * dim))
                        .ok());
          }
          CHECK(chunked == out);
        }
      }
    }
  }
  // timm's bands are its float32 chain: 1 / float32(10000)^(k / q), correctly rounded
  Sincos2dSpec s;
  s.height = s.width = 2;
  s.dim = 64;
  s.preset = Sincos2dPreset::timm;
  Sincos2dTable t;
  REQUIRE(t.init(s).ok());
  for (int k = 0; k < 16; ++k) {
    const double b = t.frequencies()[k];
    CHECK(static_cast<double>(static_cast<float>(b)) == b);
    CHECK(b == Approx(std::pow(10000.0, -k / 16.0)).epsilon(2e-7));
  }
}

TEST_CASE("2D sin-cos errors name the argument", "[sincos2d][bad]") {
  Sincos2dSpec s;
  s.height = 4;
  s.width = 4;
  s.dim = 16;
  CHECK(validate(s).ok());
  Sincos2dSpec b = s;
  b.dim = 18;
  CHECK(validate(b).argument == "dim");
  b.dim = 0;
  CHECK(validate(b).argument == "dim");
  b = s;
  b.height = 0;
  CHECK(validate(b).argument == "height");
  b = s;
  b.width = 70000;
  CHECK(validate(b).argument == "width");
  b = s;
  b.base = 0.5;
  CHECK(validate(b).argument == "base");
  b = s;
  b.preset = static_cast<Sincos2dPreset>(3);
  CHECK(validate(b).argument == "preset");
  b = s;
  b.height = b.width = 65536;
  CHECK(validate(b).argument == "dim");  // rows * dim above 2^31 - 1
  std::vector<float> out(256, 5.0f);
  CHECK(encode_2d(s, out.data(), 255).argument == "out");
  Sincos2dTable t;
  CHECK(t.write_rows(0, 1, out.data(), 16).argument == "table");
  REQUIRE(t.init(s).ok());
  CHECK(t.write_rows(16, 1, out.data(), 16).argument == "firstRow");
  CHECK(t.write_rows(10, 7, out.data(), 112).argument == "rowCount");
  for (float v : out)
    CHECK(v == 5.0f);
}

// The paper table's rule for the 2D tables too: every value the float32 nearest to the sin or cos
// of the exact product of the coordinate and the frequency (IEEE quad oracle, ties named). Rows
// (i, 0) and (0, j) hold every distinct 1D value of the grid.
TEST_CASE("2D sin-cos: every value is the correctly rounded float32", "[sincos2d][rounding]") {
  std::int64_t checked = 0, misrounded = 0, ties = 0;
  for (Sincos2dPreset preset : {Sincos2dPreset::mae, Sincos2dPreset::timm}) {
    for (std::int64_t dim : {8, 260}) {
      for (double base : {10000.0, 100.0}) {
        Sincos2dSpec s;
        s.preset = preset;
        s.height = 40;
        s.width = 33;
        s.dim = dim;
        s.base = base;
        Sincos2dTable table;
        REQUIRE(table.init(s).ok());
        std::vector<float> out(static_cast<std::size_t>(table.rows() * dim));
        REQUIRE(table.write_rows(0, table.rows(), out.data(), out.size()).ok());
        const std::vector<double>& w = table.frequencies();
        const std::int64_t q = dim / 4;
        // The column of sin/cos of coordinate `which` (0: the first half of MAE's row or timm's
        // a, 1: the second) for frequency k.
        auto column = [&](int which, bool cosine, std::int64_t k) {
          if (preset == Sincos2dPreset::mae) return which * 2 * q + (cosine ? q : 0) + k;
          return (cosine ? 2 * q : 0) + which * q + k;
        };
        auto check_row = [&](std::int64_t i, std::int64_t j) {
          const float* row = out.data() + (i * s.width + j) * dim;
          // MAE: the first half is the column index j (its meshgrid order), timm's a is i.
          const double coords[2] = {
              preset == Sincos2dPreset::mae ? static_cast<double>(j) : static_cast<double>(i),
              preset == Sincos2dPreset::mae ? static_cast<double>(i) : static_cast<double>(j)};
          for (int which = 0; which < 2; ++which)
            for (bool cosine : {false, true})
              for (std::int64_t k = 0; k < q; ++k) {
                const oracle::Rounded want =
                    oracle::rounded_sin_cos(coords[which], w[static_cast<std::size_t>(k)], cosine);
                const float got = row[column(which, cosine, k)];
                ++checked;
                if (want.tie) ++ties;
                if (!oracle::acceptable(got, want)) ++misrounded;
              }
        };
        for (std::int64_t i = 0; i < s.height; ++i)
          check_row(i, 0);
        for (std::int64_t j = 0; j < s.width; ++j)
          check_row(0, j);
      }
    }
  }
  INFO(checked << " values, " << ties << " ties");
  CHECK(checked > 50000);
  CHECK(misrounded == 0);
}
