#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "oracle.hpp"
#include "posenc/posenc.hpp"

using namespace posenc;

TEST_CASE("the shift rotation maps PE(p) to PE(p + k) within the precision bound", "[shift]") {
  for (Layout layout : {Layout::interleaved, Layout::split}) {
    for (std::int64_t dim : {2, 6, 50, 64, 51}) {
      Spec spec;
      spec.dim = dim;
      spec.layout = layout;
      if (dim % 2) spec.odd = OddDim::zero_pad;
      for (double k : {1.0, 5.0, -3.0, 1000.0, 0.5}) {
        INFO(oracle::describe(spec) << " k=" << k);
        std::vector<float> m(dim * dim);
        REQUIRE(shift_matrix(spec, k, m.data(), m.size()) == Status::ok);
        for (double p : {3.0, 17.0, 123456.0, 16777000.0}) {
          const auto from = oracle::encode_at(spec, {p});
          const auto to = oracle::encode_at(spec, {p + k});
          double worst = 0;
          for (std::int64_t r = 0; r < dim; ++r) {
            double acc = 0;
            for (std::int64_t c = 0; c < dim; ++c)
              acc += double(m[r * dim + c]) * from[c];
            worst = std::max(worst, std::fabs(acc - to[r]));
          }
          CHECK(worst <= oracle::kBound);
        }
      }
    }
  }
}

TEST_CASE("shift blocks hold cos and sin of k w_i", "[shift]") {
  Spec spec;
  spec.dim = 8;
  std::vector<float> b(8);
  REQUIRE(shift_blocks(spec, 2.0, b.data(), b.size()) == Status::ok);
  CHECK(b[0] == Approx(std::cos(2.0)).margin(1e-7));
  CHECK(b[1] == Approx(std::sin(2.0)).margin(1e-7));
  CHECK(shift_blocks(spec, 2.0, b.data(), 6) == Status::size_mismatch);
}

TEST_CASE("shift rejects odd paper dims and bad k", "[shift]") {
  Spec spec;
  spec.dim = 5;
  std::vector<float> m(25);
  CHECK(shift_matrix(spec, 1.0, m.data(), m.size()) == Status::unsupported_shift);
  spec.dim = 4;
  CHECK(shift_matrix(spec, std::nan(""), m.data(), 16) == Status::invalid_shift);
  CHECK(shift_matrix(spec, 1e12, m.data(), 16) == Status::invalid_shift);
}
