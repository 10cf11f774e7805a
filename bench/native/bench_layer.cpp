// Times one TransformerEncoderLayer forward (LCG weights of tests/fixtures/layer/lcg.py), natively
// or, built with emcmake, as wasm under Node (the numbers that compare with onnxruntime-web):
//
//   node --no-experimental-fetch build/wasm/bench/native/posenc_bench_layer.cjs \
//       [d heads ff L position [runs [out.f32]]]
//   build/native/bench/native/posenc_bench_layer [d heads ff L position [runs [out.f32]]]
//
// position: none | rotary | rotary-half50 | rotary-interleaved | alibi (symmetric, no mask) |
// alibi-causal (with the causal mask). A 7th argument names a file for the last forward's output
// (float32; bench/layer.mjs compares it with onnxruntime-web's). Without arguments it runs the
// cases of bench/layer.mjs (tiny, small, medium, long) with each position step. Prints the median
// ms per forward and GFLOP/s (matrix products only, as bench/layer.mjs).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "posenc/nn/transformer_layer.hpp"
#ifndef __EMSCRIPTEN__
#include <sys/resource.h>
#endif
#include "test_layer_util.hpp"

using namespace posenc;

namespace {

// The memory the process holds: the wasm memory's size, or natively the peak resident set (MB).
double memory_mb() {
#ifdef __EMSCRIPTEN__
  return static_cast<double>(__builtin_wasm_memory_size(0)) * 65536.0 / 1048576.0;
#else
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
#endif
}

bool set_position(const std::string& name, LayerConfig* c, ForwardOptions* o) {
  PositionConfig& p = c->position;
  if (name == "none") {
    p.method = PositionMethod::none;
  } else if (name == "rotary" || name == "rotary-half50" || name == "rotary-interleaved") {
    p.method = PositionMethod::rotary;
    if (name == "rotary-half50") p.rotary_dim = c->d_model / c->heads / 2;
    if (name == "rotary-interleaved") p.rotary_layout = RotaryLayout::interleaved;
  } else if (name == "alibi") {
    p.method = PositionMethod::alibi;
    p.alibi_mode = AlibiMode::symmetric;
  } else if (name == "alibi-causal") {
    p.method = PositionMethod::alibi;
    p.alibi_mode = AlibiMode::causal;
    o->causal = true;
  } else {
    return false;
  }
  return true;
}

double time_case(std::int64_t d, std::int64_t heads, std::int64_t ff, std::int64_t length,
                 const std::string& position, int runs, const char* out_path) {
  LayerConfig config;
  config.d_model = d;
  config.heads = heads;
  config.ff_dim = ff;
  ForwardOptions options;
  if (!set_position(position, &config, &options)) {
    std::fprintf(stderr, "unknown position step %s\n", position.c_str());
    std::exit(2);
  }
  TransformerEncoderLayer layer;
  if (LayerError e = layer.configure(config); !e.ok()) {
    std::fprintf(stderr, "%s\n", e.message().c_str());
    std::exit(2);
  }
  for (const auto& t : layer_test::layer_state(1, d, ff))
    layer.set_tensor(t.name, t.values.data(), t.values.size());
  const std::vector<float> x = layer_test::layer_input(1, length, d);
  std::vector<float> out(x.size());
  std::vector<double> ms;
  for (int r = -std::max(2, runs / 10); r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const LayerError e = layer.forward(x.data(), x.size(), length, options, out.data(), out.size());
    const auto t1 = std::chrono::steady_clock::now();
    if (!e.ok()) {
      std::fprintf(stderr, "%s\n", e.message().c_str());
      std::exit(1);
    }
    if (r >= 0) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  if (out_path != nullptr) {  // the output of the last forward, float32 little-endian
    if (std::FILE* f = std::fopen(out_path, "wb")) {
      std::fwrite(out.data(), sizeof(float), out.size(), f);
      std::fclose(f);
    }
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void report(std::int64_t d, std::int64_t heads, std::int64_t ff, std::int64_t length,
            const std::string& position, int runs, const char* out_path = nullptr) {
  const double ms = time_case(d, heads, ff, length, position, runs, out_path);
  const double flops = 2.0 * length * d * 3 * d + 2.0 * length * d * d + 4.0 * length * d * ff +
                       4.0 * length * length * d;
  std::printf("d %4lld heads %2lld ff %5lld L %5lld %-20s %10.3f ms %7.2f GFLOP/s %8.1f MB\n",
              static_cast<long long>(d), static_cast<long long>(heads), static_cast<long long>(ff),
              static_cast<long long>(length), position.c_str(), ms, flops / (ms * 1e6),
              memory_mb());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::printf("posenc layer bench (%s GEMM)\n", gemm_uses_simd() ? "wasm SIMD" : "scalar");
  if (argc >= 6) {
    report(std::atoll(argv[1]), std::atoll(argv[2]), std::atoll(argv[3]), std::atoll(argv[4]),
           argv[5], argc >= 7 ? std::atoi(argv[6]) : 10, argc >= 8 ? argv[7] : nullptr);
    return 0;
  }
  struct Case {
    std::int64_t d, heads, ff, length;
    int runs;
  };
  const Case cases[] = {{64, 4, 256, 32, 400},
                        {256, 8, 1024, 128, 40},
                        {512, 8, 2048, 512, 7},
                        {128, 4, 512, 2048, 7}};
  for (const Case& c : cases)
    for (const char* position : {"none", "rotary", "alibi", "alibi-causal"})
      report(c.d, c.heads, c.ff, c.length, position, c.runs);
  return 0;
}
