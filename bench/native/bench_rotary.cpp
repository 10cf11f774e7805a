// Timing of the rotary, ALiBi and 2D families against the memory-speed yardstick the JS API is
// held to: apply in place vs copying the same bytes in and out (what the JS layer must do anyway),
// cos_sin / alibi_bias / encode_2d vs writing the bytes once and copying them out. Medians of
// repeated runs; natively with `posenc_bench_rotary`, under Node by compiling this file with em++
// (see the README section Speed).
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
    std::int64_t rows, heads, head_dim;
  };
  std::printf("%-34s %10s %10s %7s\n", "case", "posenc ms", "limit ms", "ratio");
  for (Shape sh : {Shape{4096, 32, 128}, Shape{2048, 8, 64}, Shape{1, 32, 128}}) {
    for (RotaryLayout layout : {RotaryLayout::half, RotaryLayout::interleaved}) {
      RotarySpec spec;
      spec.head_dim = sh.head_dim;
      spec.layout = layout;
      RotaryEmbedding rot;
      if (!rot.init(spec).ok()) return 1;
      const std::size_t n = static_cast<std::size_t>(sh.rows * sh.heads * sh.head_dim);
      std::vector<float> user(n, 0.5f), wasm(n), back(n);
      RotaryRows rows;
      rows.count = sh.rows;
      rows.first_position = sh.rows == 1 ? 5000 : 0;
      const int runs = sh.rows == 1 ? 2001 : 21;
      // The limit: copy in and copy out of the same bytes.
      const double copy = median_seconds(runs, [&] {
        std::memcpy(wasm.data(), user.data(), n * sizeof(float));
        std::memcpy(back.data(), wasm.data(), n * sizeof(float));
        sink = back[n / 2];
      });
      const double total = median_seconds(runs, [&] {
        std::memcpy(wasm.data(), user.data(), n * sizeof(float));
        rot.apply(rows, sh.heads, wasm.data(), n);
        std::memcpy(back.data(), wasm.data(), n * sizeof(float));
        sink = back[n / 2];
      });
      char name[64];
      std::snprintf(name, sizeof name, "apply [%lld,%lld,%lld] %s", (long long)sh.rows,
                    (long long)sh.heads, (long long)sh.head_dim,
                    layout == RotaryLayout::half ? "half" : "interl.");
      std::printf("%-34s %10.4f %10.4f %7.2f\n", name, total * 1e3, copy * 1e3, total / copy);
    }
  }
  auto write_case = [](const char* name, std::size_t n, const std::function<void(float*)>& fill) {
    std::vector<float> wasm(n), back(n);
    const double limit = median_seconds(11, [&] {
      std::memset(wasm.data(), 0, n * sizeof(float));
      std::memcpy(back.data(), wasm.data(), n * sizeof(float));
      sink = back[n / 2];
    });
    const double total = median_seconds(11, [&] {
      fill(wasm.data());
      std::memcpy(back.data(), wasm.data(), n * sizeof(float));
      sink = back[n / 2];
    });
    std::printf("%-34s %10.4f %10.4f %7.2f\n", name, total * 1e3, limit * 1e3, total / limit);
  };
  {
    RotarySpec spec;
    spec.head_dim = 128;
    RotaryEmbedding rot;
    rot.init(spec);
    const std::size_t n = 8192 * 128;
    std::vector<float> sin(n);
    write_case("cosSin 8192 x 128 (cos; + sin)", 2 * n, [&](float* out) {
      RotaryRows rows;
      rows.count = 8192;
      rot.cos_sin(rows, out, out + n, n, n);
    });
  }
  {
    AlibiSpec s;
    s.heads = 32;
    s.query_length = 1024;
    s.key_length = 1024;
    const std::size_t n = 32u * 1024 * 1024;
    write_case("alibiBias 32 x 1024 x 1024", n, [&](float* out) { alibi_bias(s, out, n); });
  }
  {
    Sincos2dSpec s;
    s.height = s.width = 64;
    s.dim = 1024;
    Sincos2dTable t;
    t.init(s);
    const std::size_t n = 64u * 64 * 1024;
    write_case("encode2d 64 x 64 x 1024 (table)", n,
               [&](float* out) { t.write_rows(0, t.rows(), out, n); });
    write_case("encode2d 64 x 64 x 1024 (one call)", n, [&](float* out) { encode_2d(s, out, n); });
  }
  return 0;
}
