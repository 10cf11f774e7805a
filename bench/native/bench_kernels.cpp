// The core's table and rotation work alone, without the JavaScript layer's copies: how far each
// kernel is from writing the same bytes (the floor under the JS API's speed targets). Under
// emcmake a wasm SIMD program for Node, best run with TurboFan from the start (V8 cannot move a
// running function out of Liftoff, its baseline tier, 2-3x slower here: a loop inlined into
// main() would be timed there):
//   node --no-experimental-fetch --no-liftoff build/wasm/bench/native/posenc_bench_kernels.cjs
// Natively: build/native/bench/native/posenc_bench_kernels. Work goes in 256 KB pieces, as the JS
// layer's scratch chunks do; each figure is the minimum over repeated runs (compute-bound and
// cache-resident, so the minimum is the figure least disturbed by other jobs).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "posenc/posenc.hpp"

namespace {

volatile float sink;

double best_ms(int runs, const std::function<void()>& f) {
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    best =
        std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  return best * 1e3;
}

// Writing `floats` floats in pieces of `piece` floats, into one reused piece (the yardstick).
double fill_ms(int runs, std::int64_t floats, std::int64_t piece) {
  std::vector<float> out(static_cast<std::size_t>(piece));
  return best_ms(runs, [&] {
    for (std::int64_t done = 0; done < floats; done += piece) {
      std::fill(out.begin(), out.end(), static_cast<float>(done));
    }
    sink = out[7];
  });
}

void row(const char* name, double ms, double limit) {
  std::printf("%-44s %9.4f ms %9.4f ms %6.2fx\n", name, ms, limit, ms / limit);
}

}  // namespace

int main() {
  using namespace posenc;
  constexpr std::int64_t kPiece = 65536;  // floats: the JS layer's 256 KB scratch
  constexpr int kRuns = 200;
  std::printf("%-44s %12s %12s %7s\n", "kernel (256 KB pieces)", "posenc", "write same", "ratio");
  for (std::int64_t dim : {512, 1024}) {
    const std::int64_t length = dim == 512 ? 2048 : 8192;
    Spec spec;
    spec.dim = dim;
    SinusoidalEncoder enc(spec);
    const std::int64_t rows_per_piece = kPiece / dim;
    std::vector<float> out(static_cast<std::size_t>(kPiece));
    const double ms = best_ms(dim == 512 ? kRuns : kRuns / 8, [&] {
      for (std::int64_t r = 0; r < length; r += rows_per_piece) {
        RowPositions rows;
        rows.count = rows_per_piece;
        rows.first_position = static_cast<double>(r);
        enc.encode(rows, out.data(), out.size());
      }
      sink = out[9];
    });
    char name[64];
    std::snprintf(name, sizeof name, "encode %lld x %lld", static_cast<long long>(length),
                  static_cast<long long>(dim));
    row(name, ms, fill_ms(dim == 512 ? kRuns : kRuns / 8, length * dim, kPiece));
  }
  {
    RotarySpec spec;
    spec.head_dim = 128;
    RotaryEmbedding rot;
    if (!rot.init(spec).ok()) return 1;
    const std::int64_t rows_per_piece = kPiece / (2 * 128);
    std::vector<float> c(static_cast<std::size_t>(kPiece / 2)), s(c.size());
    const double ms = best_ms(kRuns, [&] {
      for (std::int64_t r = 0; r < 4096; r += rows_per_piece) {
        RotaryRows rows;
        rows.count = rows_per_piece;
        rows.first_position = static_cast<double>(r);
        rot.cos_sin(rows, c.data(), s.data(), c.size(), s.size());
      }
      sink = c[9];
    });
    row("cosSin 4096 x 128 (cos and sin)", ms, fill_ms(kRuns, 2 * 4096 * 128, kPiece));
  }
  {
    RotarySpec spec;
    spec.head_dim = 64;
    RotaryEmbedding rot;
    if (!rot.init(spec).ok()) return 1;
    const std::int64_t heads = 8, rows_per_piece = kPiece / (heads * 64);
    std::vector<float> x(static_cast<std::size_t>(kPiece), 0.5f);
    const double ms = best_ms(kRuns, [&] {
      for (std::int64_t r = 0; r < 2048; r += rows_per_piece) {
        RotaryRows rows;
        rows.count = rows_per_piece;
        rows.first_position = static_cast<double>(r);
        rot.apply(rows, heads, x.data(), x.size());
      }
      sink = x[9];
    });
    // (The JS layer adds copying the rows in and out of wasm memory, TypedArray.set: a native
    // memcpy there, which this wasm program cannot time alike.)
    row("apply [2048, 8, 64] (in place)", ms, fill_ms(kRuns, 2048 * heads * 64, kPiece));
  }
  return 0;
}
