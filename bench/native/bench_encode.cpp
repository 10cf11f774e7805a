// Native timing of the posenc kernels (plain chrono, medians of repeated runs): bulk encode and
// add_to through a reused 256 KB chunk and into one large table, the 1 x 512 small call, the
// libm reference, and memset of the same bytes as the memory-speed yardstick.
//   cmake --build build/k-native --target posenc_bench && build/k-native/bench/native/posenc_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "median.hpp"
#include "posenc/posenc.hpp"

namespace {

volatile float sink;

}  // namespace

int main() {
  using namespace posenc;
  struct Shape {
    std::int64_t rows, dim;
  };
  for (Shape sh : {Shape{2048, 512}, Shape{8192, 1024}, Shape{100000, 512}}) {
    for (Layout layout : {Layout::interleaved, Layout::split}) {
      Spec spec;
      spec.dim = sh.dim;
      spec.layout = layout;
      const SinusoidalEncoder enc(spec);
      const std::size_t n = static_cast<std::size_t>(sh.rows * sh.dim);
      std::vector<float> out(n, 1.0f);
      const double bytes = 4.0 * static_cast<double>(n);
      RowPositions rows;
      rows.count = sh.rows;
      const int runs = sh.rows * sh.dim > 10000000 ? 5 : 21;
      const double t_memset =
          median_seconds(runs, [&] { std::memset(out.data(), 0, n * sizeof(float)); });
      const double t_encode = median_seconds(runs, [&] { enc.encode(rows, out.data(), n); });
      const double t_add = median_seconds(runs, [&] { enc.add_to(rows, 1.0f, out.data(), n); });
      // Chunks of 64K floats through one scratch buffer (what the JS layer does).
      const std::int64_t chunk_rows = std::max<std::int64_t>(1, 65536 / sh.dim);
      std::vector<float> scratch(static_cast<std::size_t>(chunk_rows * sh.dim));
      const double t_chunks = median_seconds(runs, [&] {
        for (std::int64_t r = 0; r < sh.rows; r += chunk_rows) {
          RowPositions part;
          part.count = std::min(chunk_rows, sh.rows - r);
          part.first_position = static_cast<double>(r);
          enc.encode(part, scratch.data(), static_cast<std::size_t>(part.count * sh.dim));
        }
        sink = scratch[0];
      });
      std::printf(
          "%6lld x %4lld %-11s memset %7.3f ms (%5.1f GB/s) | encode %7.3f ms (%5.1f GB/s, %.3f "
          "ns/elem) | chunks %7.3f ms | add_to %7.3f ms (%5.1f GB/s)\n",
          static_cast<long long>(sh.rows), static_cast<long long>(sh.dim),
          layout == Layout::split ? "split" : "interleaved", t_memset * 1e3,
          bytes / t_memset * 1e-9, t_encode * 1e3, bytes / t_encode * 1e-9,
          t_encode / static_cast<double>(n) * 1e9, t_chunks * 1e3, t_add * 1e3,
          bytes / t_add * 1e-9);
      if (sh.rows == 2048 && layout == Layout::interleaved) {
        std::vector<float> ref(n);
        const double t_ref = median_seconds(3, [&] { enc.encode_reference(rows, ref.data(), n); });
        std::printf("%6lld x %4lld reference (float64 sincos per element) %.3f ms\n",
                    static_cast<long long>(sh.rows), static_cast<long long>(sh.dim), t_ref * 1e3);
      }
    }
  }
  // The incremental-decoding call: 1 row x 512 at offsets up to 2^24.
  Spec spec;
  spec.dim = 512;
  const SinusoidalEncoder enc(spec);
  std::vector<float> row(512), emb(512, 0.5f);
  const int calls = 200000;
  for (double offset : {0.0, 16777216.0 - 5.0}) {
    RowPositions one;
    one.count = 1;
    const double t = median_seconds(5, [&] {
      for (int i = 0; i < calls; ++i) {
        one.first_position = offset - static_cast<double>(i % 1000);
        if (one.first_position < 0) one.first_position = static_cast<double>(i % 1000);
        enc.encode(one, row.data(), 512);
      }
      sink = row[0];
    });
    const double ta = median_seconds(5, [&] {
      for (int i = 0; i < calls; ++i) {
        one.first_position = offset + static_cast<double>(i % 3);
        enc.add_to(one, 0.0f, emb.data(), 512);
      }
      sink = emb[0];
    });
    std::printf("1 x 512 at ~%.0f: encode %.1f ns/call, add_to %.1f ns/call\n", offset,
                t / calls * 1e9, ta / calls * 1e9);
  }
  return 0;
}
